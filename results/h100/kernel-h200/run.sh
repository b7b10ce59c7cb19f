#!/usr/bin/env bash
# The tiled kernel alone at 4096 and 8192 cubed on both backends against cuBLAS, and the classes
# of shapes on the CUDA path, with the shipped databases. From the repository root after the
# prelude, GPU naming the device (default NVIDIA); into $OUT/kernel-h200/:
#   bash results/h100/kernel-h200/run.sh
set -u
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/kernel-h200
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/kernel-$be.txt" 150 python3 -m clgemm bench --device "$gpu" \
    --backend $be --sizes 4096,8192 --rungs tiled --json "$W/kernel-$be.json"
done
python3 scripts/kernel_against_cublas.py "$W/kernel-cuda.json" "$W/kernel-opencl.json" \
  > "$W/kernel-against-cublas.md" 2>&1
bash scripts/logged_run.sh "$W/classes-cuda.txt" 200 python3 -m clgemm bench --call \
  --device "$gpu" --backend cuda --sizes classes --c-given --json "$W/classes-cuda.json"
cat "$W/kernel-against-cublas.md"
