#!/usr/bin/env bash
# gemm()'s calls in TURNS with the package of $OLD_COMMIT (./abold: the split padded product
# at short sides up to 64) and this tree (up to 128, THIN_MAX), on both backends, C given,
# device arrays: 4096xNx4096 and Nx4096x4096 with N of 72-120, the products with a side of 100
# the change moves by the lookup's reckoning, and 4096x48x4096 (moved by neither). From the
# repository root after the prelude; into $OUT/thin-split.tgz:
#   bash results/h100/thin-split/run.sh "TURNS"
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
W=${OUT:-/tmp}/thin-split
shapes=4096x72x4096,4096x96x4096,4096x120x4096,72x4096x4096,96x4096x4096,120x4096x4096,4096x100x4000,1024x100x16000,100x2048x16000,100x1536x4000,512x100x16000,4096x48x4096
TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$1" \
  "thin-cuda=--device H100 --backend cuda --sizes $shapes --c-given" \
  "thin-opencl=--device H100 --backend opencl --sizes $shapes --c-given"
(cd "$(dirname "$W")" && tar czf thin-split.tgz thin-split && rm -rf thin-split)
