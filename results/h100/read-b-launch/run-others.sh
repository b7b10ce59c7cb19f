#!/usr/bin/env bash
# The calls outside the classes, with the rules and databases as committed: `bench --call`'s
# default shapes and the stacks on both backends, in TURNS with the package of $OLD_COMMIT
# (old, ./abold) and this tree (new). From the repository root after the prelude; into
# $OUT/rbl-others.tgz:
#   bash results/h100/read-b-launch/run-others.sh "TURNS"
set -u
W=${OUT:-/tmp}/rbl-others
mkdir -p "$W"
TURN_TIMEOUT=150 bash scripts/turns.sh "$W" "$1" \
  "default-cuda=--device H100 --backend cuda --c-given" \
  "default-opencl=--device H100 --backend opencl --c-given" \
  "stacks-cuda=--device H100 --backend cuda --sizes stacks --c-given" \
  "stacks-opencl=--device H100 --backend opencl --sizes stacks --c-given"
cd "$(dirname "$W")" && tar czf rbl-others.tgz rbl-others && rm -rf rbl-others
