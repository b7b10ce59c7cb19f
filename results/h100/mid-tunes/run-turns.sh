#!/usr/bin/env bash
# gemm()'s calls in TURNS with the package of $OLD_COMMIT (./abold: the databases before
# run-tune.sh's tunes): the large products on both backends, and on the CUDA path products
# whose kernel the new 2048-cubed entry moves from the tiled kernel for any size to the tiled
# kernel (scripts/choice_moves.py). C given, device arrays. From the repository root after the
# prelude; into $OUT/mid-tunes-turns.tgz:
#   bash results/h100/mid-tunes/run-turns.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/mid-tunes-turns
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
TURN_TIMEOUT=90 bash scripts/turns.sh "$W" "$turns" \
  "large-cuda=--device H100 --backend cuda --sizes large --c-given" \
  "large-opencl=--device H100 --backend opencl --sizes large --c-given" \
  "moved-cuda=--device H100 --backend cuda --sizes 2048x800x1000,2048x1536x1000,2500x2500x500,4096x512x500,1536x1024x1000,768x2000x1000,800x2500x1000 --c-given"
(cd "$(dirname "$W")" && tar czf mid-tunes-turns.tgz mid-tunes-turns)
rm -rf "$W"
