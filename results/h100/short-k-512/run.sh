#!/usr/bin/env bash
# 1024x1024x512 on the CUDA path, which the 1024-cubed entry's 128 x 128 tiles left to the tiled
# kernel for any size: the tiled kernel tuned there for SECONDS into the shipped database,
# verify's quick sweep with it, then it and its neighbours, C given, device arrays, in TURNS
# with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root
# after the prelude; into $OUT/short-k-512.tgz:
#   bash results/h100/short-k-512/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/short-k-512
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf short-k-512.tgz.part short-k-512 && mv short-k-512.tgz.part short-k-512.tgz); }
bash scripts/tune_shipped.sh "$W/tune-cuda-1024x1024x512.txt" cuda "$seconds" "--shapes 1024x1024x512"
bash scripts/logged_run.sh "$W/verify-cuda.txt" 90 python3 -m clgemm verify --device H100 --backend cuda --quick
pack
TURN_TIMEOUT=90 bash scripts/turns.sh "$W" "$turns" \
  "short-cuda=--device H100 --backend cuda --sizes 1024x1024x512,1024,2048x2048x512,1024x1024x256 --c-given"
pack
rm -rf "$W"
