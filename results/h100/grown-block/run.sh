#!/usr/bin/env bash
# The tiled kernel tuned on the CUDA path at 4096 and 8192 cubed into the shipped database,
# SECONDS each, its search now trying the stored configuration with a larger register block;
# verify's quick sweep with the new database; the kernel alone against cuBLAS at both sizes;
# and gemm()'s calls over the large products in TURNS with the package of $OLD_COMMIT (./abold,
# the database before the tunes). From the repository root after the prelude; into
# $OUT/grown-block.tgz, packed after each step:
#   bash results/h100/grown-block/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/grown-block
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf grown-block.tgz.part grown-block && mv grown-block.tgz.part grown-block.tgz); }
for s in 4096 8192; do
  bash scripts/tune_shipped.sh "$W/tune-cuda-$s.txt" cuda "$seconds" "--shapes $s"
done
pack
bash scripts/logged_run.sh "$W/verify-cuda.txt" 120 python3 -m clgemm verify --device H100 --backend cuda --quick
bash scripts/logged_run.sh "$W/kernel-cuda.txt" 90 python3 -m clgemm bench --device H100 --backend cuda \
  --sizes 4096,8192 --rungs tiled --json "$W/kernel-cuda.json"
pack
TURN_TIMEOUT=100 bash scripts/turns.sh "$W/turns" "$turns" \
  "large-cuda=--device H100 --backend cuda --sizes large --c-given"
pack
rm -rf "$W"
