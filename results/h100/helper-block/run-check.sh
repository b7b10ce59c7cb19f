#!/usr/bin/env bash
# After the sum of slices went back to one element a work-item: the library's call tests with
# the H100 as the test device, and the long-K products that sum slices, C given, device arrays,
# on both backends. From the repository root after the prelude; into $OUT/helper-check.tgz:
#   bash results/h100/helper-block/run-check.sh
set -u
W=${OUT:-/tmp}/helper-check
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf helper-check.tgz.part helper-check && mv helper-check.tgz.part helper-check.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 130 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/long-k-$be.txt" 40 python3 -m clgemm bench --call --device H100 \
    --backend $be --sizes 256x256x16384,512x512x16384 --c-given --json "$W/long-k-$be.json"
done
pack
rm -rf "$W"
