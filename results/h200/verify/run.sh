#!/usr/bin/env bash
# `clgemm verify` with the shipped databases: the whole sweep on the H200 through CUDA and
# OpenCL, the quick sweep on its host's Xeon through PoCL. Into $OUT/verify/ (packed into
# $OUT/verify.tgz). From the repository root after the prelude:
#   bash results/h200/verify/run.sh
set -u
W=${OUT:-/tmp}/verify
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/verify-results PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 220 python3 -m clgemm verify --device H200 \
    --backend $be --failures "$W/failures-$be.json"
done
bash scripts/logged_run.sh "$W/verify-xeon.txt" 150 python3 -m clgemm verify --device xeon \
  --quick --failures "$W/failures-xeon.json"
(cd "$(dirname "$W")" && tar czf verify.tgz verify)
