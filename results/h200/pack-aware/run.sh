#!/usr/bin/env bash
# On an H200: shapes whose choice the lookup's grid moves with the choice counting the pack of B
# (as gemm() is called with them: C-ordered, so the lookup sees N x M x K), C given, device
# arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the
# repository root after the prelude; into $OUT/pack-aware-h200.tgz:
#   bash results/h200/pack-aware/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/pack-aware-h200
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "moved-cuda=--device H200 --backend cuda --sizes 1024x64x16000,512x128x16000,2048x256x4000 --c-given" \
  "moved-opencl=--device H200 --backend opencl --sizes 768x64x16000,4000x128x256,1536x384x4000 --c-given"
(cd "$(dirname "$W")" && tar czf pack-aware-h200.tgz pack-aware-h200)
rm -rf "$W"
