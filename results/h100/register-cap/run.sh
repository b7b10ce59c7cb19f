#!/usr/bin/env bash
# scripts/register_cap_sweep.py at SIZE on both backends, ROUNDS rounds, with no cap and caps
# of 168 and 128 registers a work-item; the CUDA path's gemm() tests after cl2cuda.h's
# CL2CUDA_MIN_BLOCKS. From the repository root after the prelude; into $OUT/register-cap/:
#   bash results/h100/register-cap/run.sh ROUNDS SIZE
set -u
rounds=$1 size=$2
W=${OUT:-/tmp}/register-cap
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/caps-$be-$size.txt" 120 \
    python3 scripts/register_cap_sweep.py H100 $be "$rounds" "$size" 0 168 128
done
bash scripts/device_tests.sh "$W/tests-cuda-H100.txt" H100 90 "-q -p no:cacheprovider tests/test_cuda_gemm.py"
