#!/usr/bin/env bash
# The tiled kernel tuned at 512 cubed and 2048x2048x64 on both backends into the shipped
# databases, the space kept to configurations that read B as it lies (`splits.reading_only`);
# verify's quick sweep on both backends with them; then `bench --call` over the classes and
# the small squares in TURNS, with the package of $OLD_COMMIT (old, ./abold) and this tree
# (new). From the repository root after the prelude; into $OUT/rbl.tgz:
#   bash results/h100/read-b-launch/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/rbl
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  for s in 512x512x512 2048x2048x64; do
    bash scripts/tune_shipped.sh "$W/tune-$be-$s.txt" $be "$seconds" "--shapes $s"
  done
done
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $be --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -n 2 "$W/verify-$be.txt"
done
specs=()
for s in classes small; do
  specs+=("$s-cuda=--device H100 --backend cuda --sizes $s --c-given"
          "$s-opencl=--device H100 --backend opencl --sizes $s --c-given")
done
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" "${specs[@]}"
cd "$(dirname "$W")" && tar czf rbl.tgz rbl && rm -rf rbl
