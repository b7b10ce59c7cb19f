#!/usr/bin/env bash
# gemm()'s call against the GPU targets of "Every call at the cost of one launch" and "Ahead of
# cuBLAS on large products", at one commit, with the shipped databases: `clgemm bench --call
# --c-given` on device arrays for each SET of STEPS (small, stacks, classes, default: the bench's
# own GPU set, large) on both backends, OpenCL with CLBlast tuned beside it, each under its time
# limit; then `scripts/call_targets.py` and, for the large products, `scripts/against_cublas.py`.
# From the repository root after the prelude, GPU naming the device (default NVIDIA); into
# $OUT/targets-h200/:
#   bash results/h100/targets-h200/run.sh "small stacks classes default large"
set -u
steps=$1
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/targets-h200
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
declare -A limit=([small]=60 [stacks]=90 [classes]=180 [default]=180 [large]=150)
for set in $steps; do
  sizes="--sizes $set"
  [ "$set" = default ] && sizes=""
  bash scripts/logged_run.sh "$W/$set-cuda.txt" "${limit[$set]}" python3 -m clgemm bench --call \
    --device "$gpu" --backend cuda $sizes --c-given --json "$W/$set-cuda.json"
  bash scripts/logged_run.sh "$W/$set-opencl.txt" "${limit[$set]}" python3 -m clgemm bench --call \
    --device "$gpu" --backend opencl $sizes --c-given \
    --clblast-params results/h100/clblast-xgemm-tuned.json --json "$W/$set-opencl.json"
done
python3 scripts/call_targets.py "$W" > "$W/targets.md" 2>&1
[ -e "$W/large-cuda.json" ] && python3 scripts/against_cublas.py "$W/large-cuda.json" \
  "$W/large-opencl.json" 2048 > "$W/large-against-cublas.md" 2>&1
tail -n 30 "$W/targets.md"
