#!/usr/bin/env bash
# With the short-K split held to tiles of C that leave more than half the compute units idle:
# verify's quick sweep on both backends, then the shapes of run-moved.sh and 1024 cubed, C
# given, device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree
# (new). From the repository root after the prelude; into $OUT/half.tgz:
#   bash results/h100/short-k-split/run-half.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/half
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 60 python3 -m clgemm verify --device H100 --backend $be --quick
done
sizes=640,896,1024,1024x1024x512,512x512x1024,256x256x1024
TURN_TIMEOUT=60 bash scripts/turns.sh "$W" "$turns" \
  "half-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "half-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
cd "$(dirname "$W")" && tar czf half.tgz half && rm -rf half
