#!/usr/bin/env bash
# Through OpenCL, the tiled kernel tuned for SECONDS each at 3520x2560x4512 and 4160x4160x4128
# (the kernel's views of 2500x3500x4500 and 4097 cubed padded to 64 x 64 tiles, K to a multiple
# of 32 so that every tile depth divides it) into the shipped database; verify's quick sweep
# with it; then bench --call at those products and 2048x3000x4000 in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/padded-tune-opencl.tgz:
#   bash results/h100/gap/run-padded-tune-opencl.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/padded-tune-opencl
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for s in 3520x2560x4512 4160x4160x4128; do
  bash scripts/tune_shipped.sh "$W/tune-opencl-$s.txt" opencl "$seconds" "--shapes $s"
done
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
cmd="python3 -m clgemm verify --device H100 --backend opencl --quick"
{ echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-opencl.txt"
tail -n 1 "$W/verify-opencl.txt"
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" \
  "padded-opencl=--device H100 --backend opencl --sizes 2500x3500x4500,4097,2048x3000x4000 --c-given"
cd "$(dirname "$W")" && tar czf padded-tune-opencl.tgz padded-tune-opencl && rm -rf padded-tune-opencl
