#!/usr/bin/env bash
# The moved shapes of short K (64 and 256) with the kernel for any size's retuned entries, C
# given, device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold, the databases as
# shipped) and this tree (new). From the repository root after the prelude; into
# $OUT/any-size-short-k.tgz:
#   bash results/h100/any-size-retune/run-short-k.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/any-size-short-k
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
cuda=512x2048x64,300x4000x64,500x2500x64,384x2048x64,256x4096x64,800x2048x256,4096x1000x256
opencl=2500x1200x64,500x4096x64,512x1200x64,700x800x64,100x4000x64,640x1100x256,300x2500x256
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "short-cuda=--device H100 --backend cuda --sizes $cuda --c-given" \
  "short-opencl=--device H100 --backend opencl --sizes $opencl --c-given"
(cd "$(dirname "$W")" && tar czf any-size-short-k.tgz any-size-short-k)
rm -rf "$W"
