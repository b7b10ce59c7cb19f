#!/usr/bin/env bash
# The tiled kernel on OpenCL tuned at the classes that were below 0.8x cuBLAS there (the shapes
# as the kernels see them: a C-ordered call's M and N swapped), $TUNE_S seconds each (45 by
# default), its search starting from the same GPU's CUDA entry at each slot
# (lookup.other_backends), into the shipped database, which is copied to $OUT. Run from the
# repository root after the prelude:  bash results/h100/call/cross-backend/run-tunes.sh
set -u
OUT=${OUT:-/tmp/cross-backend}
# B is read as it lies at the first shape, which a cp.async pipeline cannot do
for spec in 32x4096x4096:PIPELINE=0 4096x32x4096: 2048x2048x128: 256x256x16384: 512x512x16384:; do
  shape=${spec%%:*}; only=${spec#*:}
  bash scripts/tune_shipped.sh "$OUT/tune-$shape-opencl.txt" opencl "${TUNE_S:-45}" \
    "--shapes $shape ${only:+--only $only}"
done
