#!/usr/bin/env bash
# The shapes whose kernel the tiled kernel for any size's split of K moves (by the lookup's own
# reckoning on the shipped databases), and 1000 cubed, C given, device arrays, in TURNS with the
# package of $OLD_COMMIT (old, ./abold) and this tree (new), on both backends. From the
# repository root after the prelude; into $OUT/any-size-turns.tgz:
#   bash results/h100/any-size-split/run-turns.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/any-size-turns
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
moved=1000,500x500x4000,300x300x10000,250x250x16000,1000x100x1000,100x4000x4000,4000x100x4000
TURN_TIMEOUT=120 bash scripts/turns.sh "$W" "$turns" \
  "moved-cuda=--device H100 --backend cuda --sizes $moved --c-given" \
  "moved-opencl=--device H100 --backend opencl --sizes $moved --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
(cd "$(dirname "$W")" && tar czf any-size-turns.tgz any-size-turns)
rm -rf "$W"
