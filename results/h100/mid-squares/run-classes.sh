#!/usr/bin/env bash
# The tiled kernel tuned for SECONDS at 1024 cubed on the CUDA path (its stored entry there is
# slower than the call runs) into the shipped database and verify's quick sweep with it; then in
# TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new): 512 to 1024 cubed on
# the CUDA path and the classes on both backends, C given, device arrays; then, this tree alone,
# the large products on both backends. From the repository root after the prelude; into
# $OUT/mid-classes.tgz:
#   bash results/h100/mid-squares/run-classes.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/mid-classes
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
bash scripts/tune_shipped.sh "$W/tune-cuda-1024.txt" cuda "$seconds" "--shapes 1024"
bash scripts/logged_run.sh "$W/verify-cuda.txt" 120 python3 -m clgemm verify --device H100 --backend cuda --quick
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" \
  "mid-cuda=--device H100 --backend cuda --sizes 512,768,1000,1024 --c-given" \
  "classes-cuda=--device H100 --backend cuda --sizes classes --c-given" \
  "classes-opencl=--device H100 --backend opencl --sizes classes --c-given"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/large-$be.txt" 150 python3 -m clgemm bench --call --device H100 \
    --backend $be --sizes large --c-given --json "$W/large-$be.json"
done
cd "$(dirname "$W")" && tar czf mid-classes.tgz mid-classes && rm -rf mid-classes
