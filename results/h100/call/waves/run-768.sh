#!/usr/bin/env bash
# The tiled kernel on CUDA tuned at 768 cubed for 40 s into the shipped database (its slot's
# entry was slower there than the 64 x 64 tiles measured at 1024 cubed, which the count of
# waves no longer expects above it), then 640-1536 cubed with the package of $OLD_COMMIT (old,
# ./abold) and this tree (new) in turns, C given, on both backends. Into $OUT/w768.tgz:
#   bash results/h100/call/waves/run-768.sh "1 2 3"
bash scripts/gpu_tune_turns.sh w768 "$1" tune-768-cuda:cuda:40:768x768x768 \
  w768-cuda="--device H100 --backend cuda --sizes 640,768,1024,1536 --c-given" \
  w768-opencl="--device H100 --backend opencl --sizes 640,768,1024,1536 --c-given"
