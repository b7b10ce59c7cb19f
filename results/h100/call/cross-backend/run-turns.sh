#!/usr/bin/env bash
# The classes of shapes on OpenCL with the package of $OLD_COMMIT (old: the database before the
# tunes of run-tunes.sh, unpacked into ./abold) and this tree (new: with them) in turns on one
# loan, turns "$1" (e.g. "1 2"). Run from the repository root after the prelude:
#   bash results/h100/call/cross-backend/run-turns.sh "1 2"
set -u
TURN_TIMEOUT=150 bash scripts/turns.sh "${OUT:-/tmp/cross-backend}" "$1" \
  classes-opencl="--device H100 --backend opencl --sizes classes --c-given"
