#!/usr/bin/env bash
# The H200 tuned at 768 cubed through OpenCL, gemm()'s lowest shape against CLBlast in
# `../../h200/bench-call-opencl.txt`: the tiled kernel, 45 s, then the calls around it as
# `bench --call` makes them (a new C each call), in turns with the package of $OLD_COMMIT.
# From the repository root after the prelude, with ./abold the old package:
#   bash results/h100/tune-768-h200/run.sh "1 2"
bash scripts/tune_turns.sh "${OUT:-/tmp}/tune-768-h200" opencl 768 tiled 45 "$1" \
  "--sizes 640,768,896"
