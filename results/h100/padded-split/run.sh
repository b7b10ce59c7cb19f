#!/usr/bin/env bash
# gemm()'s calls in TURNS with the package of $OLD_COMMIT (./abold: a padded product could run
# tiles that gemm() would split K for at the padded shape, K whole) and this tree (such tiles
# left out), on both backends, C given, device arrays: 4096x48x4096 and 4096x40x4096 (the
# CUDA path ran them padded, K whole) and a sample of the products the change moves by the
# lookup's reckoning (scripts/choice_moves.py: long K at mid sizes, and K of 500 through
# OpenCL). From the repository root after the prelude; into $OUT/padded-split/:
#   bash results/h100/padded-split/run.sh "TURNS"
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
shapes=4096x48x4096,4096x40x4096,800x800x4000,999x900x4000,2500x256x16000,2000x384x16000,2048x500x4000,512x64x500,1000x64x500
TURN_TIMEOUT=90 bash scripts/turns.sh "${OUT:-/tmp}/padded-split" "$1" \
  "moved-cuda=--device H100 --backend cuda --sizes $shapes --c-given" \
  "moved-opencl=--device H100 --backend opencl --sizes $shapes --c-given"
