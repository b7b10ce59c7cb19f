#!/usr/bin/env bash
# With the databases of the UNROLL_K tune: verify's quick sweep on both backends, and each
# tiled option of gemm() at the classes where the kernels decide timed with UNROLL_K both ways
# (scripts/choice_sweep.py, UNROLL=1). From the repository root after the prelude; into
# $OUT/uk-check.tgz:
#   bash results/h100/unroll-k/run-check.sh
set -u
W=${OUT:-/tmp}/uk-check
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $be --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 150 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -2 "$W/verify-$be.txt"
  cmd="python3 scripts/choice_sweep.py H100 $be 4096x32x4096 256x256x16384 512x512x16384 2048x2048x128 4096x4096x4096"
  { echo "$head; $(date -u +%FT%TZ): UNROLL=1 $cmd"; UNROLL=1 timeout 200 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/choice-unroll-$be.txt"
done
cd "$(dirname "$W")" && tar czf uk-check.tgz uk-check && rm -rf uk-check
