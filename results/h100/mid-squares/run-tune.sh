#!/usr/bin/env bash
# The call tests that share C with an operand or run on out-of-order queues (the panel pack's
# among them), with the H100 and then the GPU machine's Xeon as the test device; then tunes of
# SECONDS each into the shipped databases: the tiled kernel for any size at 1000 cubed on both
# backends, the tiled kernel at 1024 cubed through OpenCL, and through OpenCL at 512 cubed among
# the small tiles that the CUDA path's 512-cubed entry belongs to. From the repository root after
# the prelude; into $OUT/mid-tune.tgz:
#   bash results/h100/mid-squares/run-tune.sh SECONDS
set -u
seconds=$1
W=${OUT:-/tmp}/mid-tune
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
tests="-q tests/test_gemm_overlap.py tests/test_gemm_queues.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "$tests"
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 150 "$tests"
RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-cuda-1000.txt" cuda "$seconds" "--shapes 1000"
RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-opencl-1000.txt" opencl "$seconds" "--shapes 1000"
bash scripts/tune_shipped.sh "$W/tune-opencl-1024.txt" opencl "$seconds" "--shapes 1024"
bash scripts/tune_shipped.sh "$W/tune-opencl-512.txt" opencl "$seconds" \
  "--shapes 512 --only TSM=32,64 --only TSN=16,32 --only WPTM=2,4 --only WPTN=2,4"
cd "$(dirname "$W")" && tar czf mid-tune.tgz mid-tune && rm -rf mid-tune
