#!/usr/bin/env bash
# The tiled kernel at 768 cubed beside the database of ../any-short-k/ (a plain tune's, and its
# two short-K steps): on each backend, one step of the tiled kernel at 768x768x768 (10 s), then
# gemm()'s calls at SHAPES with the database before the step (old) and after it (new), in
# turns, ROUNDS rounds (scripts/step_turns.sh). From the repository root after the prelude,
# into $OUT/step-768:
#   bash results/h200/step-768/run.sh tune                  the steps; their databases kept
#   [SHAPES=small] [ROUNDS="1 2"] [NAME=calls] bash results/h200/step-768/run.sh measure   needs DB=folder
BASE=results/h200/any-short-k RUNG=tiled STEP=768x768x768 SECONDS=10 STEM=${NAME:-calls} \
  NAME=step-768 exec bash scripts/step_turns.sh "$@"
