#!/usr/bin/env bash
# A new C each call, as 18022e2 (a template's empty_like through OpenCL) and 738c057 (the quick
# way for a repeated call without C) make it, on one loan: every gemm() call test on both
# backends of the GPU and on the host's CPU; then `bench --call` at 640 and 768 cubed in turns,
# the package of $OLD_COMMIT in ./abold (old) against this tree (new), both backends, a new C
# each call. Into $OUT/new-c/ (packed into $OUT/new-c.tgz). From the repository root after the
# prelude, GPU naming the device (default H200):
#   bash results/h200/new-c/run.sh "1 2 3"
set -u
turns=$1
gpu=${GPU:-H200}
W=${OUT:-/tmp}/new-c
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
tests="$(ls tests/test_gemm_*.py | tr '\n' ' ') tests/test_cuda_gemm.py"
bash scripts/every_device_tests.sh "$W" "$gpu" 150 "-q -p no:cacheprovider $tests"
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  cl="--device $gpu --backend opencl --sizes 640,768" \
  cu="--device $gpu --backend cuda --sizes 640,768"
(cd "$(dirname "$W")" && tar czf new-c.tgz new-c)
