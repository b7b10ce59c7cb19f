#!/usr/bin/env bash
# On this machine kind's 2-core Intel Xeon (PoCL 3.1): the tiled kernel tuned as a stack at the
# stacks of `bench --call --sizes stacks` (SECONDS each) into the shipped database (step
# "tune"), then those stacks with the package of $OLD_COMMIT (old: its code and its database,
# ./abold) and this tree (new) in turns, C given and a new C, beside CLBlast's strided-batched
# call and NumPy (step "turns"). From the repository root:
#   OLD_COMMIT=... COMMIT=... bash results/pocl/stack-tiled/run.sh SECONDS "1 2" ["tune turns"]
bash scripts/cpu_tune_turns.sh "$PWD/results/pocl/stack-tiled" "$1" "$2" "${3:-tune turns}" \
  "tiled:1000x64x64x64 tiled:100x256x256x256 tiled:10x1024x1024x1024" \
  stacks="--device 0 --sizes stacks --c-given" stacks-new-c="--device 0 --sizes stacks"
