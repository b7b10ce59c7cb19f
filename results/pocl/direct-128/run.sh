#!/usr/bin/env bash
# On this machine kind's 2-core Intel Xeon (PoCL 3.1): the direct kernel tuned at 128 cubed
# (SECONDS) into the shipped database, where the plain tune measures nothing below 256 cubed
# (step "tune"); then the products around it with the package of $OLD_COMMIT (old: its code and
# database, ./abold) and this tree (new) in turns, a new C each call, beside CLBlast and NumPy
# (step "turns"). From the repository root:
#   OLD_COMMIT=... COMMIT=... bash results/pocl/direct-128/run.sh SECONDS "1 2" ["tune turns"]
set -u
seconds=$1 turns=$2 steps=${3:-tune turns}
W=$PWD/results/pocl/direct-128
head="# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, PoCL 3.1; at commit ${COMMIT:-?}"
if [[ " $steps " == *" tune "* ]]; then
  HEAD="$head" bash scripts/cpu_tune_shipped.sh "$W/tune-128.txt" direct 128 $seconds
fi
if [[ " $steps " == *" turns "* ]]; then
  PATH=$PWD/.venv/bin:$PATH HEAD="$head" TURN_TIMEOUT=600 bash scripts/turns.sh "$W" "$turns" \
    around-128="--device 0 --sizes 64,96,128,160,192,224"
fi
