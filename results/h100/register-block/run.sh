#!/usr/bin/env bash
# The tiled kernel with fewer local loads per FMA (scripts/register_block_sweep.py), kernel
# only, in turns with cuBLAS at 4096 and 8192 cubed: the CUDA path, then OpenCL. From the
# repository root after the prelude; into $OUT/sweep-cuda.txt and $OUT/sweep-opencl.txt:
#   bash results/h100/register-block/run.sh ROUNDS SECONDS
set -u
rounds=$1 seconds=$2
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  bash scripts/logged_run.sh "${OUT:-/tmp}/sweep-$be.txt" "$seconds" \
    python3 scripts/register_block_sweep.py H100 $be "$rounds" 4096 8192
done
