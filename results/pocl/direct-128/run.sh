#!/usr/bin/env bash
# On this machine kind's 2-core Intel Xeon (PoCL 3.1): the direct kernel tuned at 128 cubed
# (SECONDS) into the shipped database, where the plain tune measures nothing below 256 cubed
# (step "tune"); then the products around it with the package of $OLD_COMMIT (old: its code and
# database, ./abold) and this tree (new) in turns, a new C each call, beside CLBlast and NumPy
# (step "turns"). From the repository root:
#   OLD_COMMIT=... COMMIT=... bash results/pocl/direct-128/run.sh SECONDS "1 2" ["tune turns"]
bash scripts/cpu_tune_turns.sh "$PWD/results/pocl/direct-128" "$1" "$2" "${3:-tune turns}" \
  "direct:128" around-128="--device 0 --sizes 64,96,128,160,192,224"
