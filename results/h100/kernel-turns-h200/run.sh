#!/usr/bin/env bash
# The tiled kernel alone at 4096 and 8192 cubed against cuBLAS (TF32 off), in turns on one GPU:
# each turn `clgemm bench --rungs tiled` on the CUDA path (cuBLAS beside it), then through
# OpenCL, with the shipped databases; then scripts/kernel_turns_table.py over every turn, and
# the turns' files gzip-compressed.
# Into $OUT/kernel-turns-h200/. From the repository root after the prelude, GPU naming the
# device (default NVIDIA):
#   bash results/h100/kernel-turns-h200/run.sh TURNS
set -u
turns=${1:-3}
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/kernel-turns-h200
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
pairs=()
for t in $(seq "$turns"); do
  for be in cuda opencl; do
    bash scripts/logged_run.sh "$W/kernel-$be-$t.txt" 150 python3 -m clgemm bench \
      --device "$gpu" --backend $be --sizes 4096,8192 --rungs tiled --json "$W/kernel-$be-$t.json"
    pairs+=("$W/kernel-$be-$t.json")
  done
done
python3 scripts/kernel_turns_table.py "${pairs[@]}" > "$W/kernel-turns.md" 2>&1
gzip -n "${pairs[@]}"  # kept out of the course's pages, which would draw every turn
(cd "$(dirname "$W")" && tar czf kernel-turns-h200.tgz kernel-turns-h200)
cat "$W/kernel-turns.md"
