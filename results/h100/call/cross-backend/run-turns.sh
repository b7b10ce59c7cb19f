#!/usr/bin/env bash
# The classes of shapes on OpenCL with the package of $OLD_COMMIT (old: the database before the
# tunes of run-tunes.sh, unpacked into ./abold) and this tree (new: with them) in turns on one
# loan, turns "$1" (e.g. "1 2"). Run from the repository root after the prelude:
#   bash results/h100/call/cross-backend/run-turns.sh "1 2"
set -u
OUT=${OUT:-/tmp/cross-backend}
mkdir -p "$OUT"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for turn in $1; do
  for v in old new; do
    dir=$root; [ $v = old ] && dir=$root/abold
    name=classes-opencl-$turn-$v
    cmd="python3 -m clgemm bench --call --device H100 --backend opencl --sizes classes --c-given --json $OUT/$name.json"
    what="this tree"; [ $v = old ] && what="package of ${OLD_COMMIT:-?}"
    { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 150 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } \
      > "$OUT/$name.txt"
    echo "turn $turn $v: $(grep 'geo-mean' "$OUT/$name.txt")"
  done
done
