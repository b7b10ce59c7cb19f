#!/usr/bin/env bash
# On this machine kind's 2-core Intel Xeon (PoCL 3.1): the tiled kernel tuned as a stack at the
# stacks of `bench --call --sizes stacks` (SECONDS each) into the shipped database (step
# "tune"), then those stacks with the package of $OLD_COMMIT (old: its code and its database,
# ./abold) and this tree (new) in turns, C given and a new C, beside CLBlast's strided-batched
# call and NumPy (step "turns"). From the repository root:
#   OLD_COMMIT=... COMMIT=... bash results/pocl/stack-tiled/run.sh SECONDS "1 2" ["tune turns"]
set -u
seconds=$1 turns=$2 steps=${3:-tune turns}
W=$PWD/results/pocl/stack-tiled
head="# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, PoCL 3.1; at commit ${COMMIT:-?}"
if [[ " $steps " == *" tune "* ]]; then
  for shape in 1000x64x64x64 100x256x256x256 10x1024x1024x1024; do
    HEAD="$head" bash scripts/cpu_tune_shipped.sh "$W/tune-$shape.txt" tiled $shape $seconds
  done
fi
if [[ " $steps " == *" turns "* ]]; then
  PATH=$PWD/.venv/bin:$PATH HEAD="$head" TURN_TIMEOUT=600 bash scripts/turns.sh "$W" "$turns" \
    stacks="--device 0 --sizes stacks --c-given" stacks-new-c="--device 0 --sizes stacks"
fi
