#!/usr/bin/env bash
# The choice weighing the direct kernel against the kernel for any size with its pack of B:
# verify's quick sweep on both backends; then shapes the lookup's grid moves to the direct
# kernel (as gemm() is called with them: C-ordered, so the lookup sees N x M x K), C given,
# device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new).
# From the repository root after the prelude; into $OUT/direct-over-pack.tgz:
#   bash results/h100/direct-over-pack/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/direct-over-pack
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf direct-over-pack.tgz.part direct-over-pack && mv direct-over-pack.tgz.part direct-over-pack.tgz); }
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
moved=2500x200x64,3000x1000x64,1500x1500x64,4096x700x64,300x2048x64,640x999x64,2048x1100x64
moved=$moved,1024x2500x64
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "moved-opencl=--device H100 --backend opencl --sizes $moved --c-given"
pack
rm -rf "$W"
