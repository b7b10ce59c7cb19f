#!/usr/bin/env bash
# The transpose of B on a GPU by 32 x 32 blocks of 32 x 8 work-items: verify's quick sweep on
# both backends; the library's call tests with the H100 as the test device; then large
# products whose call transposes B, C given, device arrays, in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/transpose.tgz, packed again after each step:
#   bash results/h100/transpose/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/transpose
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf transpose.tgz.part transpose && mv transpose.tgz.part transpose.tgz); }
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
sizes=2048,3000,4096,8192,4097,2500x3500x4500,12288x1024x4096,2048x8192x1024
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "large-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "large-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
