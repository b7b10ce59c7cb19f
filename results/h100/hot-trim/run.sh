#!/usr/bin/env bash
# The repeated call's host work before and after it was trimmed, in turns on one loan: for each
# of TURNS, scripts/floor_parts.py at SIZE (default 256) cubed on both backends with the package
# of $OLD_COMMIT in ./abold (old) and this tree (new), one process each; then `bench --call
# --sizes small --c-given` on both backends with this tree. Into $OUT/hot-trim/. From the
# repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/hot-trim/run.sh "1 2 3 4 5 6"
set -u
turns=$1 size=${SIZE:-256}
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/hot-trim
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
bash scripts/floor_turns.sh "$W/floor-turns.txt" "$turns" "$size"
cat "$W/floor-turns.txt"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/small-$be.txt" 90 python3 -m clgemm bench --call --device "$gpu" \
    --backend $be --sizes small --c-given --json "$W/small-$be.json"
done
