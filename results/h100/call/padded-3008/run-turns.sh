#!/usr/bin/env bash
# The squares and large odd sizes whose choice the 2048 and 3008 cubed entries and the count
# of two groups per unit change on CUDA, and OpenCL's small squares, with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new) in turns, C given. Into $OUT/p5.tgz:
#   bash results/h100/call/padded-3008/run-turns.sh "1 2 3"
bash scripts/gpu_tune_turns.sh p5 "$1" "" \
  third-cuda="--device H100 --backend cuda --sizes 768,896,1000,1024,1536,1792,2047,2048,3000,4097 --c-given" \
  third-opencl="--device H100 --backend opencl --sizes 64,128,256,768 --c-given"
