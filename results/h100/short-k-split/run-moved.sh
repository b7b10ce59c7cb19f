#!/usr/bin/env bash
# The shapes whose choice the short-K split moves, by the lookup's reckoning with the shipped
# databases (640 and 896 cubed, 1024x1024x512, 512x512x1024, 256x256x1024), C given, device
# arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the
# repository root after the prelude; into $OUT/moved.tgz:
#   bash results/h100/short-k-split/run-moved.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/moved
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
sizes=640,896,1024x1024x512,512x512x1024,256x256x1024
TURN_TIMEOUT=60 bash scripts/turns.sh "$W" "$turns" \
  "moved-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "moved-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
cd "$(dirname "$W")" && tar czf moved.tgz moved && rm -rf moved
