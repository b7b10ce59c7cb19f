#!/usr/bin/env bash
# gemm()'s calls in TURNS with the package of $OLD_COMMIT (./abold: a padded product ran K
# whole, so tiles gemm() would split K for at the padded shape were left out of it) and this
# tree (a padded product split as at its padded shape; an operand whose own sizes are not
# padded read where it lies), on both backends, C given, device arrays: 4096xNx4096 with N of
# 16-48 and a sample of the products the change moves by the lookup's reckoning (long K at mid
# sizes, K of 500-2000). From the repository root after the prelude; into
# $OUT/padded-split-k.tgz:
#   bash results/h100/padded-split-k/run.sh "TURNS"
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
W=${OUT:-/tmp}/padded-split-k
cuda=4096x48x4096,4096x40x4096,4096x24x4096,4096x16x4096,16x4096x4096,500x500x16000,1000x200x16000,700x700x16000,1000x256x16000,800x800x4000,384x2000x4000,700x640x2000,64x1000x1000,384x3000x64
opencl=4096x48x4096,4096x40x4096,4096x24x4096,16x4096x4096,500x500x16000,700x700x16000,1000x256x16000,500x500x4000,1000x128x1000,300x300x1000,64x1000x1000,500x64x500,128x128x500,256x256x500
TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$1" \
  "moved-cuda=--device H100 --backend cuda --sizes $cuda --c-given" \
  "moved-opencl=--device H100 --backend opencl --sizes $opencl --c-given"
(cd "$(dirname "$W")" && tar czf padded-split-k.tgz padded-split-k && rm -rf padded-split-k)
