#!/usr/bin/env bash
# The tiled kernel tuned through OpenCL at 1536 cubed for SECONDS into the shipped database
# (none stored there before), verify's quick sweep with it, then 1536 and 2048 cubed, C given,
# device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new).
# From the repository root after the prelude; into $OUT/square-1536.tgz:
#   bash results/h100/square-1536/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/square-1536
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf square-1536.tgz.part square-1536 && mv square-1536.tgz.part square-1536.tgz); }
bash scripts/tune_shipped.sh "$W/tune-opencl-1536.txt" opencl "$seconds" "--shapes 1536"
bash scripts/logged_run.sh "$W/verify-opencl.txt" 60 python3 -m clgemm verify --device H100 --backend opencl --quick
pack
TURN_TIMEOUT=60 bash scripts/turns.sh "$W" "$turns" \
  "square-opencl=--device H100 --backend opencl --sizes 1536,2048 --c-given"
pack
rm -rf "$W"
