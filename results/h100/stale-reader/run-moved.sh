#!/usr/bin/env bash
# The two products whose kernel the new 1024-cubed entry moves through OpenCL
# (scripts/choice_moves.py: 64 x 64 with K of 2000 and 4000), in TURNS with the package of
# $OLD_COMMIT (./abold). From the repository root after the prelude; into $OUT/moved/:
#   bash results/h100/stale-reader/run-moved.sh "TURNS"
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
TURN_TIMEOUT=60 bash scripts/turns.sh "${OUT:-/tmp}/moved" "$1" \
  "moved-opencl=--device H100 --backend opencl --sizes 64x64x2000,64x64x4000 --c-given"
