#!/usr/bin/env bash
# The H200's CUDA path tuned at 512 cubed, where its call waits on the kernel: the tiled and
# direct kernels, TUNE_S seconds each (default 45), into the shipped database (copied to
# tuning/); then `bench --call --c-given` on the CUDA path around 512 cubed in turns TURNS,
# old the package of $OLD_COMMIT unpacked into .whl/abold12 (the database before), new this
# tree with the tune (`scripts/tune_turns.sh`). Into $OUT/tune-512-h200/ (packed into
# $OUT/tune-512-h200.tgz). From the repository root after the prelude, GPU naming the device
# (default NVIDIA):
#   bash results/h100/tune-512-h200/run.sh "1 2"
set -u
ln -sfn .whl/abold12 abold
STEM=cu bash scripts/tune_turns.sh "${OUT:-/tmp}/tune-512-h200" cuda 512 tiled,direct \
  "${TUNE_S:-45}" "$1" "--sizes 384,448,512,640,768 --c-given"
