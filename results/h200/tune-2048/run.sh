#!/usr/bin/env bash
# The tiled kernel tuned at 2048 cubed on the H200, on each backend, into a database of its own
# ($OUT/tune-2048/db), then verify's quick sweep on both backends. Into $OUT/tune-2048/ (packed
# into $OUT/tune-2048.tgz). From the repository root after the prelude:
#   bash results/h200/tune-2048/run.sh
set -u
W=${OUT:-/tmp}/tune-2048
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
run() {  # FILE SECONDS COMMAND...: the command's output under its header
  local file=$1 seconds=$2; shift 2
  { echo "$head; $(date -u +%FT%TZ): $*"
    timeout "$seconds" "$@" 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/$file"
  tail -2 "$W/$file"
}
for be in opencl cuda; do
  CLGEMM_RESULTS=$W/db run tune-$be.txt 200 python3 -m clgemm tune --device H200 \
    --backend $be --rungs tiled --shapes 2048 --time 90
done
for be in opencl cuda; do
  run verify-$be.txt 150 python3 -m clgemm verify --quick --device H200 --backend $be
done
(cd "$(dirname "$W")" && tar czf tune-2048.tgz tune-2048)
