#!/usr/bin/env bash
# At this commit: gemm()'s call against the GPU targets (results/h100/targets/run.sh with every
# set), then the small-call probe through OpenCL at 64, 128 and 64 cubed (the bench's 64 cubed
# read slower than its 128 cubed in several loans). From the repository root after the
# prelude; into $OUT/targets.tgz and $OUT/probe-opencl.txt:
#   bash results/h100/targets-head/run.sh
set -u
bash results/h100/targets/run.sh "small stacks classes default"
PYTHONPATH=$PWD:${PYTHONPATH:-} bash scripts/logged_run.sh "${OUT:-/tmp}/probe-opencl.txt" 40 \
  python3 scripts/small_call_probe.py H100 opencl 64,128,64
