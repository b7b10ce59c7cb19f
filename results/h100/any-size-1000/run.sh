#!/usr/bin/env bash
# The tiled kernel for any size tuned again at 1000 cubed, longer than before and from another
# seed, among tiles of 64 and 128 into the shipped databases, SECONDS per backend; verify's quick
# sweep on both backends with them; then 1000 cubed and the shapes whose lookup may take its
# entry, C given, device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this
# tree (new). From the repository root after the prelude; into $OUT/any-size-1000.tgz, packed
# again after each step:
#   bash results/h100/any-size-1000/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/any-size-1000
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf any-size-1000.tgz.part any-size-1000 && mv any-size-1000.tgz.part any-size-1000.tgz); }
for be in cuda opencl; do
  RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-$be-1000.txt" $be "$seconds" \
    "--shapes 1000 --only TSM=64,128 --only TSN=64,128 --seed 1"
  pack
done
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
sizes=1000,999,1001,1000x1000x500,1000x100x1000,1100x900x1000,1500
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "near-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "near-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
