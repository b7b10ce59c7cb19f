#!/usr/bin/env bash
# 1000x100x1000, which ran on the 1000-cubed entry of the tiled kernel for any size: that kernel
# tuned there for SECONDS on each backend into the shipped databases, verify's quick sweep with
# them, then it and its neighbours, C given, device arrays, in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/thin-1000.tgz, packed again after each step:
#   bash results/h100/thin-1000/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/thin-1000
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf thin-1000.tgz.part thin-1000 && mv thin-1000.tgz.part thin-1000.tgz); }
for be in cuda opencl; do
  RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-$be-1000x100x1000.txt" $be "$seconds" "--shapes 1000x100x1000"
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
  pack
done
sizes=1000x100x1000,1000x200x1000,1000,1000x1000x500
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "thin-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "thin-opencl=--device H100 --backend opencl --sizes $sizes --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
pack
rm -rf "$W"
