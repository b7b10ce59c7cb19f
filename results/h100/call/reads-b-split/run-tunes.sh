#!/usr/bin/env bash
# The tiled kernel on $BACKEND (opencl by default) tuned among the configurations that read B as
# it lies at 64x4096x4096 (60 s) and 32x4096x4096 (90 s), then the classes with the package of
# $OLD_COMMIT (old, 0f0d0e1 by default) and this tree (new) in turns on one loan, the files
# named with $SUFFIX (b by default). Run from the repository root after the prelude:
#   bash results/h100/call/reads-b-split/run-tunes.sh "1"
set -u
OUT=${OUT:-/tmp/reads-b-split}
mkdir -p "$OUT"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='${BACKEND:-opencl}').key)")
for shape_time in 64x4096x4096:60 32x4096x4096:90; do
  shape=${shape_time%%:*}; t=${shape_time##*:}
  cmd="python3 -m clgemm tune --device H100 --backend ${BACKEND:-opencl} --rungs tiled --shapes $shape --only PIPELINE=0 --time $t --database clgemm/tuning/$key.json"
  { echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
    CLGEMM_RESULTS=/tmp/j timeout 200 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } \
    > "$OUT/tune-$shape-${BACKEND:-opencl}${SUFFIX:+-$SUFFIX}.txt"
done
cp "clgemm/tuning/$key.json" "$OUT/"
for turn in $1; do
  for v in old new; do
    dir=$root; [ $v = old ] && dir=$root/abold
    cmd="python3 -m clgemm bench --call --device H100 --backend ${BACKEND:-opencl} --sizes classes --c-given --json $OUT/classes-${BACKEND:-opencl}-$turn-$v-${SUFFIX:-b}.json"
    { echo "$head ($v: ${v/new/this tree}${v/old/ package of ${OLD_COMMIT:-0f0d0e1}}); $(date -u +%FT%TZ): $cmd"
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 120 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } \
      > "$OUT/classes-${BACKEND:-opencl}-$turn-$v-${SUFFIX:-b}.txt"
    echo "turn $turn $v: $(grep 'geo-mean' "$OUT/classes-${BACKEND:-opencl}-$turn-$v-${SUFFIX:-b}.txt")"
  done
done
