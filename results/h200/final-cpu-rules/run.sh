#!/usr/bin/env bash
# The call tests (every tests/test_gemm_*.py and tests/test_cuda_gemm.py: out-of-order queues,
# aliased operands, strided views, stacks, new C) on every device of the GPU machine with this
# tree: the H200 through CUDA and OpenCL, and the host's Xeon through PoCL 5.0. Into
# $OUT/final-cpu-rules/. From the repository root after the prelude:
#   bash results/h200/final-cpu-rules/run.sh
set -u
W=${OUT:-/tmp}/final-cpu-rules
mkdir -p "$W"
tests="$(ls tests/test_gemm_*.py | tr '\n' ' ') tests/test_cuda_gemm.py"
bash scripts/every_device_tests.sh "$W" H200 170 "-q -p no:cacheprovider $tests"
