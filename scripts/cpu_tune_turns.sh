#!/usr/bin/env bash
# On this machine kind's 2-core Intel Xeon (PoCL 3.1, device 0): step "tune" tunes each
# RUNGS:SHAPE of TUNES for SECONDS into the shipped database (scripts/cpu_tune_shipped.sh, into
# DIR/tune-SHAPE.txt); step "turns" runs each STEM="BENCH ARGS" of bench --call in TURNS with
# the package of $OLD_COMMIT (old: its code and its database, ./abold) and this tree (new)
# (scripts/turns.sh). Every file is headed by the CPU, the cores and $COMMIT. From the
# repository root:
#   OLD_COMMIT=... COMMIT=... bash scripts/cpu_tune_turns.sh DIR SECONDS "TURNS" "STEPS" \
#     "RUNGS:SHAPE ..." STEM="BENCH ARGS" ...
set -u
dir=$1 seconds=$2 turns=$3 steps=$4 tunes=$5
shift 5
head="# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, PoCL 3.1; at commit ${COMMIT:-?}"
if [[ " $steps " == *" tune "* ]]; then
  for t in $tunes; do
    HEAD="$head" bash scripts/cpu_tune_shipped.sh "$dir/tune-${t#*:}.txt" "${t%%:*}" "${t#*:}" \
      "$seconds"
  done
fi
if [[ " $steps " == *" turns "* ]]; then
  PATH=$PWD/.venv/bin:$PATH HEAD="$head" TURN_TIMEOUT=600 bash scripts/turns.sh "$dir" "$turns" "$@"
fi
