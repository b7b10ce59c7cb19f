#!/usr/bin/env bash
# The tiled kernel at 512 cubed over the small tiles, every configuration the funnel keeps of
# TSM, TSN in 16-64 and WPTM, WPTN in 1-4 (the other parameters the tune's own), on each
# backend, into an empty results folder with no database read: whether a tile the plain
# tune's annealing did not reach runs 512 cubed faster than the 32 x 32 x (4 x 4) it stores.
# From the repository root after the prelude, into $OUT/tiles-512:
#   bash results/h200/tiles-512/run.sh
set -u
T=/tmp/tiles-512 W=${OUT:-/tmp}/tiles-512 DEVICE=${DEVICE:-NVIDIA}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
rm -rf "$T" && mkdir -p "$T" "$W"
for be in ${BACKENDS:-cuda opencl}; do
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ) (CLGEMM_RESULTS=$T/$be CLGEMM_SHIPPED_TUNING=0)"
    CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be XDG_DATA_HOME=$T/data timeout 200 \
      python3 -m clgemm tune --device "$DEVICE" --backend $be --rungs tiled --shapes 512 \
      --only TSM=16,32,64 --only TSN=16,32,64 --only WPTM=1,2,4 --only WPTN=1,2,4 --time 60 -j 16 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"; } > "$W/tune-$be.txt"
  tail -n 2 "$W/tune-$be.txt"
  j=$(ls "$T/$be"/journals/*/rung12-512x512x512.jsonl)
  cp "$j" "$W/journal-$be.jsonl"  # committed gzip-compressed
  python3 scripts/journal_groups.py TSM,TSN,WPTM,WPTN "$W/journal-$be.jsonl" > "$W/groups-$be.md"
  head -14 "$W/groups-$be.md"
done
