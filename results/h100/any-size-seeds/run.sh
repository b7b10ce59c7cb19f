#!/usr/bin/env bash
# The tiled kernel for any size tuned for SECONDS at 1000 cubed on each backend, its search now
# also starting from the tiled kernel's best stored configurations, into the shipped databases;
# verify's quick sweep with them; then 1000 cubed and 1000x1000x500, C given, device arrays, in
# TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the repository
# root after the prelude; into $OUT/any-size-seeds.tgz, packed again after each step:
#   bash results/h100/any-size-seeds/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/any-size-seeds
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf any-size-seeds.tgz.part any-size-seeds && mv any-size-seeds.tgz.part any-size-seeds.tgz); }
for be in cuda opencl; do
  RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-$be-1000.txt" $be "$seconds" "--shapes 1000"
  pack
done
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 60 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
TURN_TIMEOUT=40 bash scripts/turns.sh "$W/turns" "$turns" \
  "seeds-cuda=--device H100 --backend cuda --sizes 1000,1000x1000x500 --c-given" \
  "seeds-opencl=--device H100 --backend opencl --sizes 1000,1000x1000x500 --c-given"
pack
rm -rf "$W"
