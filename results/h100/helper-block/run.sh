#!/usr/bin/env bash
# The BLAS helpers' copy, epilogue and sum of slices on a GPU by 32 x 32 blocks of 32 x 8
# work-items, as the transpose of B already was: their bandwidth beside the square block
# (scripts/transpose_bandwidth.py); verify's quick sweep on both backends; the library's call
# tests with the H100 as the test device; then products whose call pads its operands, writes C
# through the epilogue or sums slices of K, C given, device arrays, in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/helper-block.tgz, packed again after each step:
#   bash results/h100/helper-block/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/helper-block
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf helper-block.tgz.part helper-block && mv helper-block.tgz.part helper-block.tgz); }
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/bandwidth-$be.txt" 60 python3 scripts/transpose_bandwidth.py H100 $be 20 2048,4096 16x16 32x8
done
pack
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
sizes=3000,4097,2500x3500x4500,256x256x16384
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "padded-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "padded-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
