#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: pytest with ARGS on every
# device there, each under SECONDS (scripts/device_tests.sh): the GPU named GPU on the CUDA
# path and through OpenCL, then the host's Xeon through PoCL, into DIR/tests-cuda.txt,
# DIR/tests-opencl.txt and DIR/tests-xeon.txt:
#   bash scripts/every_device_tests.sh DIR GPU SECONDS "PYTEST ARGS"
set -u
dir=$1 gpu=$2 seconds=$3 args=$4
for be in cuda opencl; do
  CLGEMM_TEST_BACKEND=$be bash scripts/device_tests.sh "$dir/tests-$be.txt" "$gpu" "$seconds" \
    "$args"
done
bash scripts/device_tests.sh "$dir/tests-xeon.txt" xeon "$seconds" "$args"
