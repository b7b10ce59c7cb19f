#!/usr/bin/env bash
# The shapes whose choice of kernel the count of waves changes on the H100 (640, 768 and 1536
# cubed on CUDA, 256 and 768 on OpenCL) and 1024 cubed, which it leaves, with the package of
# $OLD_COMMIT (old, unpacked into ./abold) and this tree (new) in turns on one loan, C given to
# every call; then the classes of shapes and the bench's set on both backends with this tree.
# Everything goes to $OUT/waves.tgz. Run from the repository root after the prelude:
#   bash results/h100/call/waves/run.sh "1 2 3"
bash scripts/gpu_tune_turns.sh waves "$1" "" \
  waves-cuda="--device H100 --backend cuda --sizes 256,640,768,1024,1536 --c-given" \
  waves-opencl="--device H100 --backend opencl --sizes 256,640,768,1024,1536 --c-given"
