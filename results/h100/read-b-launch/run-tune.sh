#!/usr/bin/env bash
# The tiled kernel tuned where gemm() now reads B as it lies on the H100 (a pack's launch
# counted), the space kept to configurations that read it: 512 cubed and 2048x2048x64 on both
# backends and 512x512x16384 on OpenCL, into the shipped databases; then verify's quick sweep
# on both backends with them. From the repository root after the prelude; into
# $OUT/rbl-tune.tgz:
#   bash results/h100/read-b-launch/run-tune.sh SECONDS
set -u
seconds=${1:-40}
W=${OUT:-/tmp}/rbl-tune
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  for s in 512x512x512 2048x2048x64; do
    bash scripts/tune_shipped.sh "$W/tune-$be-$s.txt" $be "$seconds" "--shapes $s"
  done
done
bash scripts/tune_shipped.sh "$W/tune-opencl-512x512x16384.txt" opencl "$seconds" "--shapes 512x512x16384"
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $be --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -2 "$W/verify-$be.txt"
done
cd "$(dirname "$W")" && tar czf rbl-tune.tgz rbl-tune && rm -rf rbl-tune
