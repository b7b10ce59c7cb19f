#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: `bench --call` over the small
# set on both backends with the shipped databases alone (those of this tree, the slices' entries
# merged), into $OUT/shipped/small-BACKEND.{txt,json}.
set -u
W=$OUT/shipped; mkdir -p "$W"
export PYTHONUNBUFFERED=1 CLGEMM_SHIPPED_TUNING=1
for be in cuda opencl; do
  cmd="python3 -m clgemm bench --call --device NVIDIA --backend $be --sizes small --c-given"
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
    echo "CLGEMM_RESULTS=(empty) $cmd"
    CLGEMM_RESULTS=/tmp/empty-$be XDG_DATA_HOME=/tmp/data-$be timeout 150 $cmd \
      --json "$W/small-$be.json" 2>&1 | grep -v "CompilerWarning\|_prg.build"
  } > "$W/small-$be.txt"
done
