#!/usr/bin/env bash
# Shapes whose choice through OpenCL the step at 2048x2048x128 moved from another kernel
# (README.md), bench --call with the plain tune's database (old) and with it after the step
# (new, after-*.json.gz), in turns, two rounds; then the CUDA path's call after the step, for
# cuBLAS's call beside it (moved-cuda-new). From the repository root after the prelude,
# into $OUT/moved:
#   [BE=cuda SHAPES=...] bash results/h200/small-k-128/moved.sh
# (BE=cuda: the CUDA path's moved shapes, old and new, cuBLAS beside each; no run after)
set -u
T=/tmp/small-k-moved W=${OUT:-/tmp}/moved DEVICE=${DEVICE:-NVIDIA} be=${BE:-opencl}
SHAPES=${SHAPES:-1024x1024x128,512x2048x128,2048x512x96,768x1024x96,1536x1536x128,2000x3000x128,3000x2048x192,4096x768x256}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
rm -rf "$T" && mkdir -p "$T/old" "$T/new" "$W"
key=$(basename results/h200/plain-tune-combined/$be-*.json.gz .gz)
gunzip -c results/h200/plain-tune-combined/"$key".gz > "$T/old/$key"
gunzip -c results/h200/small-k-128/after-"$key".gz > "$T/new/$key"
for turn in 1 2; do
  for side in old new; do
    f=$W/moved-$be-$turn-$side
    { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ) (CLGEMM_RESULTS=$T/$side CLGEMM_SHIPPED_TUNING=0): python3 -m clgemm bench --call --device $DEVICE --backend $be --sizes $SHAPES --c-given --json $f.json"
      CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$side XDG_DATA_HOME=$T/data timeout 150 \
        python3 -m clgemm bench --call --device "$DEVICE" --backend $be --sizes "$SHAPES" \
        --c-given --json "$f.json" 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$f.txt"
    tail -n 1 "$f.txt"
  done
done
[ "$be" = cuda ] && exit 0
key=$(basename results/h200/plain-tune-combined/cuda-*.json.gz .gz)
mkdir -p "$T/cuda" && gunzip -c results/h200/small-k-128/after-"$key".gz > "$T/cuda/$key"
f=$W/moved-cuda-new
{ echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ) (CLGEMM_RESULTS=$T/cuda CLGEMM_SHIPPED_TUNING=0): python3 -m clgemm bench --call --device $DEVICE --backend cuda --sizes $SHAPES --c-given --json $f.json"
  CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/cuda XDG_DATA_HOME=$T/data timeout 150 \
    python3 -m clgemm bench --call --device "$DEVICE" --backend cuda --sizes "$SHAPES" \
    --c-given --json "$f.json" 2>&1; } > "$f.txt"
tail -n 1 "$f.txt"
