#!/usr/bin/env bash
# The tiled kernel on CUDA tuned on the stacks of `bench --call --sizes stacks` it runs (100 x
# 256 cubed, 10 x 1024 cubed), 45 s each, as stacks, into the shipped database; then those
# stacks with the package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns, C given,
# beside cp.matmul. Into $OUT/st.tgz:  bash results/h100/call/stack-tune/run.sh "1 2 3"
set -u
W=${OUT:-/tmp}/st
mkdir -p "$W"
for shape in 100x256x256x256 10x1024x1024x1024; do
  bash scripts/tune_shipped.sh "$W/tune-$shape-cuda.txt" cuda 45 "--shapes $shape"
done
bash scripts/turns.sh "$W" "$1" \
  stacks-cuda="--device H100 --backend cuda --sizes stacks --c-given"
cd "$(dirname "$W")" && tar czf st.tgz "$(basename "$W")" && rm -rf "$W"
