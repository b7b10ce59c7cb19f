#!/usr/bin/env bash
# scripts/read_b_pipeline_sweep.py on both backends, ROUNDS rounds, at 768-8192 cubed: the
# stored pipelined configurations reading B as it lies against the same behind the transpose.
# From the repository root after the prelude; into $OUT/read-b-pipeline/:
#   bash results/h100/read-b-pipeline/run.sh ROUNDS
set -u
rounds=$1
W=${OUT:-/tmp}/read-b-pipeline
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/sweep-$be.txt" 240 \
    python3 scripts/read_b_pipeline_sweep.py H100 $be "$rounds" 768 1024 2048 4096 8192
done
