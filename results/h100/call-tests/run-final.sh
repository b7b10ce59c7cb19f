#!/usr/bin/env bash
# At the session's last commit: gemm()'s call against the GPU targets (results/h100/targets/run.sh
# with every set), then on the Xeon how many columns each work-item of the panels' pack should
# copy (scripts/cpu_panel_run.py at 1024 and 2048 cubed). From the repository root after the
# prelude; into $OUT/targets.tgz and $OUT/panel-run.txt:
#   bash results/h100/call-tests/run-final.sh ROUNDS
set -u
rounds=$1
bash results/h100/targets/run.sh "small stacks classes default"
for n in 1024 2048; do
  bash scripts/logged_run.sh "${OUT:-/tmp}/panel-run-$n.txt" 100 python3 scripts/cpu_panel_run.py xeon 64,256,1024 $n "$rounds"
done
