#!/usr/bin/env bash
# One pass over everything CUDA-side that cannot be checked without a GPU: the CUDA backend and
# clgemm/kernels/cl2cuda.h (every rung, rung 10 at odd sizes), gemm()/gemm_buffers() on NumPy and
# CuPy arrays, cuBLAS and CLBlast as references, device listing across backends, the quick verify
# sweep on CUDA, and a short ladder on each of the GPU's two stacks (CUDA, OpenCL).
#
# Run on the GPU machine from the repository root, after the prelude that installs pyopencl and
# friends into /tmp/site, registers NVIDIA's OpenCL ICD and unpacks libclblast:
#   . .whl/prelude.sh && bash scripts/gpu_check.sh
# Logs go to $OUT (the device tool's folder; /tmp/gpu_check elsewhere): one file per step and
# summary.txt with each step's exit status. Every step runs even if an earlier one failed, so one
# run shows everything; the exit status is 1 if any step failed.
# CLGEMM_GPU overrides the device name given to --device (default: from nvidia-smi, e.g. H100).
set -u
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=${PYTHONPATH:-}:$PWD
failed=0

step() {
  local name=$1
  shift
  echo "=== $name: $*" | tee -a "$OUT/summary.txt"
  stdbuf -oL -eL "$@" 2>&1 | tee "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc" | tee -a "$OUT/summary.txt"
  [ "$rc" -eq 0 ] || failed=1
}

gpu=${CLGEMM_GPU:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 \
                    | grep -o -E '[A-Z][0-9]{2,4}[A-Za-z]*' | head -n 1)}
gpu=${gpu:-NVIDIA}

step env python3 -c "import sys, numpy, cupy, pyopencl, pytest; print(sys.version); \
print('numpy', numpy.__version__, 'cupy', cupy.__version__, 'pyopencl', pyopencl.VERSION_TEXT, \
'pytest', pytest.__version__); cupy.show_config()"
step nvidia-smi nvidia-smi
step devices python3 -m clgemm devices
step tests python3 -m pytest -m "cuda or not cuda" tests/test_cuda.py tests/test_cuda_gemm.py \
  tests/test_cl2cuda_text.py \
  -q -rs --durations=10
step verify-cuda python3 -m clgemm verify --device "$gpu" --backend cuda --quick
step ladder-cuda python3 -m clgemm ladder --device "$gpu" --backend cuda --size 1024 \
  --json "$OUT/ladder-cuda.json"
step ladder-opencl python3 -m clgemm ladder --device "$gpu" --backend opencl --size 1024 \
  --json "$OUT/ladder-opencl.json"
cat "$OUT/summary.txt"
exit "$failed"
