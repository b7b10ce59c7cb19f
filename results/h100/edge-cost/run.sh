#!/usr/bin/env bash
# What the tiled kernel for any size gives up against the tiled kernel with the same tiles
# (scripts/edge_cost.py) at SIZE cubed on both backends, ROUNDS rounds. From the repository root
# after the prelude; into $OUT/edge-cost.tgz:
#   bash results/h100/edge-cost/run.sh ROUNDS SIZE
set -u
rounds=$1 size=$2
W=${OUT:-/tmp}/edge-cost
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/edge-$be-$size.txt" 120 python3 scripts/edge_cost.py H100 $be "$rounds" "$size"
done
(cd "$(dirname "$W")" && tar czf edge-cost.tgz edge-cost)
rm -rf "$W"
