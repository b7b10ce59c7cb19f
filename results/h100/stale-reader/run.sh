#!/usr/bin/env bash
# The tiled kernel tuned through OpenCL at 1024 cubed into the shipped database, SECONDS, where a
# tune among readers of B now displaces the stored reader measured on a packed BT; verify's
# quick sweep through OpenCL; then gemm()'s calls at 1024 cubed and its neighbours in TURNS
# with the package of $OLD_COMMIT (./abold: the database before the tune). From the repository
# root after the prelude; into $OUT/stale-reader.tgz:
#   bash results/h100/stale-reader/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/stale-reader
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
pack() { (cd "$(dirname "$W")" && tar czf stale-reader.tgz.part stale-reader && mv stale-reader.tgz.part stale-reader.tgz); }
bash scripts/tune_shipped.sh "$W/tune-opencl-1024.txt" opencl "$seconds" "--shapes 1024"
bash scripts/logged_run.sh "$W/verify-opencl.txt" 120 python3 -m clgemm verify --device H100 --backend opencl --quick
pack
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "mid-opencl=--device H100 --backend opencl --sizes 1024,896,960,1152,1280,1024x1024x512,1024x1024x2048,1024x2048x1024 --c-given"
pack
rm -rf "$W"
