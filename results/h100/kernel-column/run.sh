#!/usr/bin/env bash
# The call tests at this commit with the H100 and with the Xeon as the test device; then
# `bench --call` at 2048, 4096 and 8192 cubed on both backends, C given, the package of
# $OLD_COMMIT (./abold: each observed call after the device drained) and this tree (each
# observed call queued behind two unobserved ones), in TURNS. From the repository root after
# the prelude; into $OUT/kernel-column.tgz, packed after each step:
#   bash results/h100/kernel-column/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/kernel-column
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf kernel-column.tgz.part kernel-column && mv kernel-column.tgz.part kernel-column.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 140 "-q -p no:cacheprovider $calls tests/test_gemm_host_hot.py"
pack
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "cuda=--device H100 --backend cuda --sizes 2048,4096,8192 --c-given" \
  "opencl=--device H100 --backend opencl --sizes 2048,4096,8192 --c-given"
pack
rm -rf "$W"
