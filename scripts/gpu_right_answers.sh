#!/usr/bin/env bash
# Right answers on the GPU machine: the tests of out-of-order queues and events, of C sharing
# memory with A or B, of a user's own tune and of the public namespace, on every device listed
# there (NVIDIA's OpenCL, CUDA through CuPy, and the host CPU's PoCL); then a user's first small
# tune before and after, on both backends of the GPU.
#   . .whl/prelude.sh && bash scripts/gpu_right_answers.sh
# Logs go to $OUT/logs (scripts/gpu_steps.sh); the exit status is 1 if any step failed.
. scripts/gpu_steps.sh
export PYTHONPATH=${PYTHONPATH:-}:$PWD
step devices clgemm devices
step tests python3 -m pytest -m "cuda or not cuda" -q -rs -p no:cacheprovider \
  tests/test_gemm_queues.py tests/test_gemm_overlap.py tests/test_user_tuning.py \
  tests/test_every_device.py tests/test_python_api.py tests/unit/test_files.py
for be in opencl cuda; do
  CLGEMM_TEST_DEVICE=$GPU CLGEMM_TEST_BACKEND=$be step "tests-$be" python3 -m pytest \
    -m "cuda or not cuda" -q -rs -p no:cacheprovider tests/test_user_tuning.py tests/test_lookup.py
done
step user-tune-opencl python3 scripts/user_tune_check.py --device "$GPU" --backend opencl
step user-tune-cuda python3 scripts/user_tune_check.py --device "$GPU" --backend cuda
finish
