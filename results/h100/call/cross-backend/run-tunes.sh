#!/usr/bin/env bash
# The tiled kernel on OpenCL tuned at the classes that were below 0.8x cuBLAS there (the shapes
# as the kernels see them: a C-ordered call's M and N swapped), $TUNE_S seconds each (45 by
# default), its search starting from the same GPU's CUDA entry at each slot
# (lookup.other_backends), into the shipped database, which is copied to $OUT. Run from the
# repository root after the prelude:  bash results/h100/call/cross-backend/run-tunes.sh
set -u
OUT=${OUT:-/tmp/cross-backend}
mkdir -p "$OUT"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='opencl').key)")
# B is read as it lies at the first shape, which a cp.async pipeline cannot do
for spec in 32x4096x4096:PIPELINE=0 4096x32x4096: 2048x2048x128: 256x256x16384: 512x512x16384:; do
  shape=${spec%%:*}; only=${spec#*:}
  cmd="python3 -m clgemm tune --device H100 --backend opencl --rungs tiled --shapes $shape ${only:+--only $only} --time ${TUNE_S:-45} --database clgemm/tuning/$key.json"
  { echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
    CLGEMM_RESULTS=/tmp/j timeout 200 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } \
    > "$OUT/tune-$shape-opencl.txt"
  grep -E "stored|not stored|best" "$OUT/tune-$shape-opencl.txt" | tail -3
done
cp "clgemm/tuning/$key.json" "$OUT/"
