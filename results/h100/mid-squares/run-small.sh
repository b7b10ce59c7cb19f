#!/usr/bin/env bash
# verify's quick sweep on both backends with the databases of run-tune.sh, then the squares from
# 64 to 1024 and 1000 cubed, C given, device arrays, in TURNS with the package of $OLD_COMMIT
# (old, ./abold) and this tree (new). From the repository root after the prelude; into
# $OUT/mid-small.tgz:
#   bash results/h100/mid-squares/run-small.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/mid-small
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 120 python3 -m clgemm verify --device H100 --backend $be --quick
done
sizes=64,128,256,512,768,1000,1024
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" \
  "small-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "small-opencl=--device H100 --backend opencl --sizes $sizes --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
cd "$(dirname "$W")" && tar czf mid-small.tgz mid-small && rm -rf mid-small
