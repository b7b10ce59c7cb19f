#!/usr/bin/env bash
# The tiled kernel tuned again, now that UNROLL_K is in its space, at the shapes (the kernel's
# view) where results/h100/unroll-k/codegen.txt found the loop unrolled outright faster or
# NVIDIA's OpenCL furthest behind the CUDA path, into the shipped databases (copied beside the
# logs). From the repository root after the prelude; into $OUT/uk-tune.tgz:
#   bash results/h100/unroll-k/run-tune.sh
set -u
W=${OUT:-/tmp}/uk-tune
mkdir -p "$W"
bash scripts/tune_shipped.sh "$W/tune-opencl-32x4096x4096.txt" opencl 60 "--shapes 32x4096x4096 --only PIPELINE=0"
bash scripts/tune_shipped.sh "$W/tune-opencl-256x256x16384.txt" opencl 45 "--shapes 256x256x16384"
bash scripts/tune_shipped.sh "$W/tune-cuda-256x256x16384.txt" cuda 45 "--shapes 256x256x16384"
bash scripts/tune_shipped.sh "$W/tune-cuda-4096x4096x4096.txt" cuda 60 "--shapes 4096x4096x4096"
cd "$(dirname "$W")" && tar czf uk-tune.tgz uk-tune && rm -rf uk-tune
