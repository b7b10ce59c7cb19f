#!/usr/bin/env bash
# On an H200: shapes whose choice the lookup's grid moves to the direct kernel once it is weighed
# against the kernel for any size's pack of B (as gemm() is called with them: C-ordered, so the
# lookup sees N x M x K), C given, device arrays, in TURNS with the package of $OLD_COMMIT (old,
# ./abold) and this tree (new). From the repository root after the prelude; into
# $OUT/direct-over-pack-h200.tgz:
#   bash results/h200/direct-over-pack/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/direct-over-pack-h200
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "moved-cuda=--device H200 --backend cuda --sizes 1000x900x64,800x1200x64,2500x100x1000 --c-given" \
  "moved-opencl=--device H200 --backend opencl --sizes 1000x500x256,2048x200x500,4000x100x1000,1500x300x1000,999x512x64 --c-given"
(cd "$(dirname "$W")" && tar czf direct-over-pack-h200.tgz direct-over-pack-h200)
rm -rf "$W"
