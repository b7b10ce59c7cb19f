#!/usr/bin/env bash
# The tiled kernel tuned into the shipped databases, SECONDS each: at 512 cubed on the CUDA path
# (a small call whose time is its kernel's) and at 2048 cubed on both backends (the large
# product furthest below cuBLAS); then verify's quick sweep on both backends with the new
# databases. From the repository root after the prelude; into $OUT/mid-tunes.tgz, packed
# after each step:
#   bash results/h100/mid-tunes/run-tune.sh SECONDS
set -u
seconds=$1
W=${OUT:-/tmp}/mid-tunes
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
pack() { (cd "$(dirname "$W")" && tar czf mid-tunes.tgz.part mid-tunes && mv mid-tunes.tgz.part mid-tunes.tgz); }
bash scripts/tune_shipped.sh "$W/tune-cuda-512.txt" cuda "$seconds" "--shapes 512"
bash scripts/tune_shipped.sh "$W/tune-cuda-2048.txt" cuda "$seconds" "--shapes 2048"
bash scripts/tune_shipped.sh "$W/tune-opencl-2048.txt" opencl "$seconds" "--shapes 2048"
pack
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 120 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
rm -rf "$W"
