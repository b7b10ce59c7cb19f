#!/usr/bin/env bash
# The tiled kernel tuned at 512 cubed on CUDA among the configurations that read B as it lies
# (--only PIPELINE=0: one launch for a C-ordered call), SECONDS, into the shipped database; then
# the small squares and the classes with C given, the package of $OLD_COMMIT (old, ./abold) and
# this tree (new) in turns. Into $OUT/t512b.tgz:
#   bash results/h100/call/tiled-512/run-reads-b.sh SECONDS "TURNS"
set -u
W=${OUT:-/tmp}/t512b
mkdir -p "$W"
bash scripts/tune_shipped.sh "$W/tune-512-reads-b-cuda.txt" cuda "$1" "--shapes 512x512x512 --only PIPELINE=0"
bash scripts/turns.sh "$W" "$2" \
  small-cuda-b="--device H100 --backend cuda --sizes small --c-given" \
  classes-cuda-b="--device H100 --backend cuda --sizes classes --c-given"
cd "$(dirname "$W")" && tar czf t512b.tgz t512b && rm -rf t512b
