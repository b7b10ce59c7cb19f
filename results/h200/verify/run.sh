#!/usr/bin/env bash
# `clgemm verify` with the shipped databases: the whole sweep on the H200 through CUDA and
# OpenCL, the quick sweep on its host's Xeon through PoCL. Into $OUT/verify/ (packed into
# $OUT/verify.tgz). With AFTER=1 (after 59e3df6): each GPU backend's failures replayed instead
# of its sweep. The Xeon's sweep is given XEON_S seconds (default 150). From the repository
# root after the prelude:
#   bash results/h200/verify/run.sh
set -u
W=${OUT:-/tmp}/verify
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/verify-results PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
if [ -n "${AFTER:-}" ]; then
  for be in cuda opencl; do
    bash scripts/logged_run.sh "$W/replay-$be.txt" 60 python3 -m clgemm verify --device H200 \
      --backend $be --replay "results/h200/verify/failures-$be.json"
  done
fi
for be in $([ -z "${AFTER:-}" ] && echo cuda opencl); do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 220 python3 -m clgemm verify --device H200 \
    --backend $be --failures "$W/failures-$be.json"
done
bash scripts/logged_run.sh "$W/verify-xeon${AFTER:+-after}.txt" "${XEON_S:-150}" \
  python3 -m clgemm verify --device xeon --quick --failures "$W/failures-xeon.json"
(cd "$(dirname "$W")" && tar czf verify.tgz verify)
