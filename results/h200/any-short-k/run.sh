#!/usr/bin/env bash
# The kernel for any size at a short K off the tiles, beside the database of ../small-k-128/
# (a plain tune's, and the tiled kernel's step at 2048x2048x128): on each backend, one step of
# the kernel for any size at 2000x2000x128 (17 s, as the plan's small-K steps), then gemm()'s
# calls at SHAPES with the database before the step (old) and after it (new), in turns, two
# rounds (scripts/step_turns.sh). From the repository root after the prelude, into
# $OUT/any-short-k:
#   bash results/h200/any-short-k/run.sh tune                 the steps; their databases kept
#   SHAPES=S1,S2,... bash results/h200/any-short-k/run.sh measure    needs DB=folder of them
BASE=results/h200/small-k-128 RUNG=tiled-any STEP=2000x2000x128 SECONDS=17 ROUNDS="1 2" \
  NAME=any-short-k exec bash scripts/step_turns.sh "$@"
