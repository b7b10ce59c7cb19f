#!/usr/bin/env bash
# The kernel for any size tuned again at 1000 cubed now that its measurements build it with
# PADDED_LD on its vector width as gemm() does, SECONDS per backend among tiles of 64 and 128,
# into the shipped databases; verify's quick sweep with them; then the shapes whose lookup may
# take the entry, C given, device arrays, in TURNS with the package of $OLD_COMMIT (old,
# ./abold, the databases as shipped) and this tree (new). From the repository root after the
# prelude; into $OUT/any-size-retune.tgz, packed again after each step:
#   bash results/h100/any-size-retune/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/any-size-retune
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf any-size-retune.tgz.part any-size-retune && mv any-size-retune.tgz.part any-size-retune.tgz); }
for be in cuda opencl; do
  RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-$be-1000.txt" $be "$seconds" \
    "--shapes 1000 --only TSM=64,128 --only TSN=64,128"
  pack
done
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
sizes=1000,1000x1000x500,999,1001,500x500x4000,1000x100x1000,1100x900x1000
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "near-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "near-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
