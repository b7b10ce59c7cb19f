#!/usr/bin/env bash
# run.sh's OpenCL turns alone, packed into $OUT/padded-split-opencl.tgz (a run brings back at
# most eight files): bash results/h100/padded-split/run-opencl.sh "TURNS"
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
W=${OUT:-/tmp}/padded-split-opencl
shapes=4096x48x4096,4096x40x4096,800x800x4000,999x900x4000,2500x256x16000,2000x384x16000,2048x500x4000,512x64x500,1000x64x500
TURN_TIMEOUT=90 bash scripts/turns.sh "$W" "$1" \
  "moved-opencl=--device H100 --backend opencl --sizes $shapes --c-given"
(cd "$(dirname "$W")" && tar czf padded-split-opencl.tgz padded-split-opencl) && rm -rf "$W"
