#!/usr/bin/env bash
# The tiled kernel on CUDA tuned at 3008 cubed (3000 cubed padded to 64 x 64 tiles), 60 s, into
# the shipped database, its search seeded with the same GPU's OpenCL entries (OpenCL ran 3000
# cubed on 64 x 64 tiles at 0.95x cuBLAS where CUDA's choice, 64 x 128, ran at 0.77x); then the
# large products no tile divides with the package of $OLD_COMMIT (old, ./abold) and this tree
# (new) in turns, C given, on CUDA. Into $OUT/p3.tgz:
#   bash results/h100/call/padded-3008/run.sh "1 2 3"
bash scripts/gpu_tune_turns.sh p3 "$1" tune-3008-cuda:cuda:60:3008x3008x3008 \
  padded-cuda="--device H100 --backend cuda --sizes 3000,4097,2500x3500x4500,2047 --c-given"
