#!/usr/bin/env bash
# The tiled kernel tuned at 4096 and 8192 cubed on both backends into the shipped databases,
# SECONDS each, with each seed's register-vector widths among the first configurations measured
# (e8e0fbf); then verify's quick sweep on both backends with the new databases. From the
# repository root after the prelude; into $OUT/gap-tune.tgz:
#   bash results/h100/gap/run-tune.sh SECONDS
set -u
seconds=$1
W=${OUT:-/tmp}/gap-tune
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  for s in 4096 8192; do
    bash scripts/tune_shipped.sh "$W/tune-$be-$s.txt" $be "$seconds" "--shapes $s"
  done
done
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $be --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -n 2 "$W/verify-$be.txt"
done
cd "$(dirname "$W")" && tar czf gap-tune.tgz gap-tune && rm -rf gap-tune
