#!/usr/bin/env bash
# The 16-core Xeon through PoCL 5.0 (its family's tuning), NumPy arrays, small squares, with the
# package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns: whether a small product
# whose direct configuration leaves cores idle runs faster on the packing kernels. Into
# $OUT/idle.tgz:  bash results/xeon/idle-cores/run.sh "1 2 3"
set -u
W=${OUT:-/tmp}/idle
HEAD="# the GPU machine's 16-core Xeon, PoCL 5.0; at commit ${COMMIT:-?}" bash scripts/turns.sh "$W" "$1" \
  idle-xeon="--device xeon --arrays numpy --sizes 64,128,256,384,512"
cd "$(dirname "$W")" && tar czf idle.tgz "$(basename "$W")" && rm -rf "$W"
