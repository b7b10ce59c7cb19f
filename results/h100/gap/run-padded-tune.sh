#!/usr/bin/env bash
# The tiled kernel tuned on the CUDA path at 3520x2560x4512 (the kernel's view of 2500x3500x4500
# padded to 64 x 64 tiles and a depth of 16) for SECONDS into the shipped database, so that the
# padded product is expected at a speed measured there rather than carried from 4096 cubed;
# verify's quick sweep with it; then bench --call at 2500x3500x4500 and 4097 cubed in TURNS
# with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root
# after the prelude; into $OUT/padded-tune.tgz:
#   bash results/h100/gap/run-padded-tune.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/padded-tune
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
bash scripts/tune_shipped.sh "$W/tune-cuda-3520x2560x4512.txt" cuda "$seconds" "--shapes 3520x2560x4512"
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
cmd="python3 -m clgemm verify --device H100 --backend cuda --quick"
{ echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-cuda.txt"
tail -n 1 "$W/verify-cuda.txt"
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" \
  "padded-cuda=--device H100 --backend cuda --sizes 2500x3500x4500,4097,2048x3000x4000 --c-given"
cd "$(dirname "$W")" && tar czf padded-tune.tgz padded-tune && rm -rf padded-tune
