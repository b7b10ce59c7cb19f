#!/usr/bin/env bash
# The call tests on every device of the GPU machine with the trial record in the lookup: every
# tests/test_gemm_*.py and tests/test_cuda_gemm.py (out-of-order queues, aliased operands,
# strided views, stacks, a new C each call) on the H200 through CUDA and OpenCL and on the Xeon
# through PoCL 5.0. Into $OUT/final-trial-record/; from the repository root after the prelude,
# with COMMIT naming the tree:
#   COMMIT=<sha> bash results/h200/final-trial-record/run.sh
set -u
W=${OUT:-/tmp}/final-trial-record
mkdir -p "$W"
tests="$(ls tests/test_gemm_*.py | tr '\n' ' ') tests/test_cuda_gemm.py"
bash scripts/every_device_tests.sh "$W" H200 200 "-q -p no:cacheprovider $tests"
