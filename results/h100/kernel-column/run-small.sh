#!/usr/bin/env bash
# `bench --call --sizes small` on both backends, C given, this tree: the call beside its
# launches at 64-1024 cubed. From the repository root after the prelude; into
# $OUT/kernel-column-small/:
#   bash results/h100/kernel-column/run-small.sh
set -u
W=${OUT:-/tmp}/kernel-column-small
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/small-$be.txt" 90 python3 -m clgemm bench --call --device H100 \
    --backend $be --sizes small --c-given --json "$W/small-$be.json"
done
