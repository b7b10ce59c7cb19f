#!/usr/bin/env bash
# With the databases of tune/: bench --call over the large products (C given, device arrays)
# on both backends in TURNS with the package of $OLD_COMMIT (old, ./abold: the databases before
# tune/) and this tree (new); the kernels alone against cuBLAS at 4096 and 8192 cubed (bench
# without --call); and run-vectors.sh in one turn with A read as float2 and float8. From the
# repository root after the prelude; into $OUT/gap-after.tgz:
#   bash results/h100/gap/run-after.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/gap-after
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
TURN_TIMEOUT=120 bash scripts/turns.sh "$W" "$turns" \
  "large-cuda=--device H100 --backend cuda --sizes large --c-given" \
  "large-opencl=--device H100 --backend opencl --sizes large --c-given"
for be in cuda opencl; do
  cmd="python3 -m clgemm bench --device H100 --backend $be --sizes 4096,8192 --rungs tiled --json $W/kernel-$be.json"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 120 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/kernel-$be.txt"
  grep -i "cublas\|clblast" "$W/kernel-$be.txt" | tail -2
done
bash results/h100/gap/run-vectors.sh "$W/vectors" 1 "2 8"
cd "$(dirname "$W")" && tar czf gap-after.tgz gap-after && rm -rf gap-after
