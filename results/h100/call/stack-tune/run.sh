#!/usr/bin/env bash
# The tiled kernel on CUDA tuned on the stacks of `bench --call --sizes stacks` it runs (100 x
# 256 cubed, 10 x 1024 cubed), 45 s each, as stacks, into the shipped database; then those
# stacks with the package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns, C given,
# beside cp.matmul. Into $OUT/st.tgz:  bash results/h100/call/stack-tune/run.sh "1 2 3"
bash scripts/gpu_tune_turns.sh st "$1" \
  "tune-100x256x256x256-cuda:cuda:45:100x256x256x256 tune-10x1024x1024x1024-cuda:cuda:45:10x1024x1024x1024" \
  stacks-cuda="--device H100 --backend cuda --sizes stacks --c-given"
