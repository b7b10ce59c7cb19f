#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: the tests of operands off the
# kernels' vectors (NumPy arrays, and buffers and pyopencl arrays made over host arrays) and of
# gemm()'s calls on the GPU named H200 (CUDA path, OpenCL) and the host's Xeon (PoCL 5.0), into
# $OUT/host-buffers.
#   bash results/h200/host-buffers-off-vector/run.sh
set -u
W=$OUT/host-buffers; mkdir -p "$W"
bash scripts/every_device_tests.sh "$W" H200 150 "-q -x -p no:cacheprovider \
  tests/test_gemm_host_alignment.py tests/test_gemm_api.py tests/test_gemm_queues.py \
  tests/test_gemm_overlap.py tests/test_gemm_stacks.py tests/test_every_device.py"
