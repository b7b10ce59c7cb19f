#!/usr/bin/env bash
# On this machine kind's 2-core Intel Xeon (PoCL 3.1): the tiled kernel tuned at 256 cubed
# (SECONDS) into the shipped database, where the plain tune measures only the direct kernel
# (step "tune"); then the products around it with the package of $OLD_COMMIT (old: its code and
# database, ./abold) and this tree (new) in turns, a new C each call, beside CLBlast and NumPy
# (step "turns"). From the repository root:
#   OLD_COMMIT=... COMMIT=... bash results/pocl/tiled-256/run.sh SECONDS "1 2" ["tune turns"]
bash scripts/cpu_tune_turns.sh "$PWD/results/pocl/tiled-256" "$1" "$2" "${3:-tune turns}" \
  "tiled:256" around-256="--device 0 --sizes 128,192,256,320,384,512"
