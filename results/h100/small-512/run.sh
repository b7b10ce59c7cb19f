#!/usr/bin/env bash
# 512 cubed, whose call is its kernel's time on both backends: the tiled kernel tuned there for
# SECONDS on each backend into the shipped databases (each search starting from the best
# configurations known, the tile orders and the unrolled depth among them), verify's quick
# sweep with them, then 256 and 512 cubed, C given, device arrays, in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/small-512.tgz, packed again after each step:
#   bash results/h100/small-512/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/small-512
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf small-512.tgz.part small-512 && mv small-512.tgz.part small-512.tgz); }
for be in cuda opencl; do
  bash scripts/tune_shipped.sh "$W/tune-$be-512.txt" $be "$seconds" "--shapes 512"
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
  pack
done
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "small-cuda=--device H100 --backend cuda --sizes 256,512 --c-given" \
  "small-opencl=--device H100 --backend opencl --sizes 256,512 --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
pack
rm -rf "$W"
