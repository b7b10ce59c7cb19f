#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: gemm()'s tests of layouts and
# strided views, in-order and out-of-order queues, operands that overlap C and operands off the
# kernels' vectors, on the GPU named H200 (CUDA path, OpenCL) and the host's Xeon (PoCL 5.0),
# into $OUT/gemm-tests-final.
#   bash results/h200/gemm-tests-final/run.sh
set -u
W=$OUT/gemm-tests-final; mkdir -p "$W"
bash scripts/every_device_tests.sh "$W" H200 130 "-q -x -p no:cacheprovider \
  tests/test_gemm_api.py tests/test_gemm_queues.py tests/test_gemm_overlap.py \
  tests/test_gemm_host_alignment.py"
