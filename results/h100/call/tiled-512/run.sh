#!/usr/bin/env bash
# The tiled kernel tuned at 512 cubed on both H100 backends (SECONDS each; the direct kernel
# runs it today), then the small squares of `bench --call --sizes small` with C given, with the
# package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns. Into $OUT/t512.tgz:
#   bash results/h100/call/tiled-512/run.sh SECONDS "TURNS"
set -u
bash scripts/gpu_tune_turns.sh t512 "$2" \
  "tune-512-cuda:cuda:$1:512x512x512 tune-512-opencl:opencl:$1:512x512x512" \
  small-cuda="--device H100 --backend cuda --sizes small --c-given" \
  small-opencl="--device H100 --backend opencl --sizes small --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
