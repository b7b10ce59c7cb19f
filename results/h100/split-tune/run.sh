#!/usr/bin/env bash
# Whether splitting K pays at 1024 cubed with tiles chosen for it: in a copy of this tree whose
# tiled kernel splits K from K = 512 (not 2048), the tiled kernel tuned for SECONDS at 1024 cubed
# on each backend among larger tiles (--only TSM=64,128 --only TSN=64,128 --only WPTM=4,8
# --only WPTN=4,8,16; the tuner measures each configuration split as gemm() would split it)
# into that copy's databases; then `bench --call` at 1024 cubed in TURNS with this tree (old)
# and the copy (new), C given, device arrays. From the repository root after the prelude; into
# $OUT/split-tune.tgz, packed again after each step:
#   bash results/h100/split-tune/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/split-tune
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf split-tune.tgz.part split-tune && mv split-tune.tgz.part split-tune.tgz); }
T=/tmp/split-tune-copy
rm -rf "$T" && mkdir -p "$T/abold" && cp -r clgemm scripts "$T/" && cp -r clgemm "$T/abold/"
python3 - "$T/clgemm/configs/splits.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = "if params.get(\"PANELS\") or k < SPLIT_FROM_K or"
assert text.count(old) == 1, "the tiled kernel's threshold line moved"
open(path, "w").write(text.replace(old, "if params.get(\"PANELS\") or k < 512 or"))
PY
large="--only TSM=64,128 --only TSN=64,128 --only WPTM=4,8 --only WPTN=4,8,16"
for be in cuda opencl; do
  (cd "$T" && PYTHONPATH=$T:${PYTHONPATH:-} COMMIT="${COMMIT:-?} with tiled_slices splitting K from 512" \
     bash scripts/tune_shipped.sh "$W/tune-$be-1024.txt" $be "$seconds" "--shapes 1024 $large")
  pack
done
(cd "$T" && HEAD="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); new: ${COMMIT:-?} with tiled_slices splitting K from 512 and the tunes above" \
  OLD_COMMIT=${COMMIT:-?} TURN_TIMEOUT=60 bash scripts/turns.sh "$W" "$turns" \
  "split-cuda=--device H100 --backend cuda --sizes 1024 --c-given" \
  "split-opencl=--device H100 --backend opencl --sizes 1024 --c-given")
pack
rm -rf "$W"
