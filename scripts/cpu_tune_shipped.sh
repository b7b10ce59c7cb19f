#!/usr/bin/env bash
# One tune on this machine's CPU (device 0) into the shipped database of this machine kind's
# 2-core Intel Xeon (its journals to /tmp/j), its output, headed by $HEAD (the device and
# commit) and its command, into FILE. Run from the repository root:
#   HEAD="# ..." bash scripts/cpu_tune_shipped.sh FILE RUNGS SHAPES SECONDS
set -u
file=$1 rungs=$2 shapes=$3 seconds=$4
db=clgemm/tuning/opencl-genuineintel-pthread-skylake-avx512-intel-r-xeon-r-processor-3.1-debian.json
cmd="python3 -m clgemm tune --device 0 --rungs $rungs --shapes $shapes --time $seconds --database $db"
{ echo "${HEAD:-#}; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
  CLGEMM_RESULTS=/tmp/j timeout 600 .venv/bin/$cmd 2>&1 | grep -v "evaluated, "; } > "$file"
grep "stored" "$file" | tail -1
