#!/usr/bin/env bash
# At this commit, after the split padded product at skinny shapes: gemm()'s call against the
# GPU targets (results/h100/targets/run.sh with every set); then, on the GPU machine's 16-core
# Xeon through PoCL 5.0 (its family's tuning), `bench --call` on NumPy arrays into a given C at
# 1024-4096 cubed. From the repository root after the prelude; into $OUT/targets.tgz and
# $OUT/xeon-call.txt, .json:
#   bash results/h100/targets-skinny/run.sh
set -u
bash results/h100/targets/run.sh "small stacks classes default"
PYTHONPATH=$PWD:${PYTHONPATH:-} XDG_DATA_HOME=/tmp/clgemm-data bash scripts/logged_run.sh \
  "${OUT:-/tmp}/xeon-call.txt" 150 python3 -m clgemm bench --call --device xeon --arrays numpy \
  --sizes 1024,2048,4096 --c-given --json "${OUT:-/tmp}/xeon-call.json"
