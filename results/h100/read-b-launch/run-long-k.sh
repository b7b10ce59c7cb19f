#!/usr/bin/env bash
# The tiled kernel tuned at 256x256x16384 and 512x512x16384 on both backends into the shipped
# databases, its space kept to configurations that read B as it lies (reading B pays there at
# any K now), each stored entry taking its slot from the pipeline stored there; verify's quick
# sweep with them; then `bench --call` over the classes in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/rbl-long-k.tgz:
#   bash results/h100/read-b-launch/run-long-k.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/rbl-long-k
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  for s in 256x256x16384 512x512x16384; do
    bash scripts/tune_shipped.sh "$W/tune-$be-$s.txt" $be "$seconds" "--shapes $s"
  done
done
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $be --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -n 2 "$W/verify-$be.txt"
done
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" \
  "classes-cuda=--device H100 --backend cuda --sizes classes --c-given" \
  "classes-opencl=--device H100 --backend opencl --sizes classes --c-given"
cd "$(dirname "$W")" && tar czf rbl-long-k.tgz rbl-long-k && rm -rf rbl-long-k
