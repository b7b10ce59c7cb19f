#!/usr/bin/env bash
# One tune on the H100 of $RUNGS (default: the tiled kernel) into the shipped database of BACKEND
# (its journals to /tmp/j), its output, headed by the device, commit and command, into FILE; the
# database is copied beside FILE. Run from the repository root after the prelude:
#   [RUNGS=tiled-any] bash scripts/tune_shipped.sh FILE BACKEND SECONDS "TUNE ARGS"
set -u
file=$1 backend=$2 seconds=$3 args=$4
export XDG_DATA_HOME=${XDG_DATA_HOME:-/tmp/clgemm-data} PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='$backend').key)")
cmd="python3 -m clgemm tune --device H100 --backend $backend --rungs ${RUNGS:-tiled} $args --time $seconds --database clgemm/tuning/$key.json"
{ echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
  CLGEMM_RESULTS=/tmp/j timeout 200 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } > "$file"
grep -E "stored" "$file" | tail -1
cp "clgemm/tuning/$key.json" "$(dirname "$file")/"
