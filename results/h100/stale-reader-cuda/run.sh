#!/usr/bin/env bash
# The tiled kernel tuned on the CUDA path at 64 x 4096 x 4096 (as the kernels see it), SECONDS,
# where the stored reader was measured behind the transpose of B; verify's quick sweep on the
# CUDA path; then gemm()'s calls at the skinny classes in TURNS with the package of
# $OLD_COMMIT (./abold: the database before the tune). From the repository root after the
# prelude; into $OUT/stale-reader-cuda.tgz:
#   bash results/h100/stale-reader-cuda/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/stale-reader-cuda
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
pack() { (cd "$(dirname "$W")" && tar czf stale-reader-cuda.tgz.part stale-reader-cuda && mv stale-reader-cuda.tgz.part stale-reader-cuda.tgz); }
bash scripts/tune_shipped.sh "$W/tune-cuda-64x4096x4096.txt" cuda "$seconds" "--shapes 64x4096x4096"
bash scripts/logged_run.sh "$W/verify-cuda.txt" 120 python3 -m clgemm verify --device H100 --backend cuda --quick
pack
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "skinny-cuda=--device H100 --backend cuda --sizes 4096x64x4096,4096x32x4096,4096x128x4096,2048x64x4096,4096x64x2048,4096x48x4096 --c-given"
pack
rm -rf "$W"
