#!/usr/bin/env bash
# The tiled kernel split where it reads B as it lies below 64 rows of C, with the CUDA database's
# entries at 32x4096x4096 and 64x4096x4096 (tuned with PIPELINE=0, the configurations that can
# read B): a 60 s tune of the second, then the classes of shapes with the package of 0f0d0e1
# (old, unpacked with `git archive 0f0d0e1 clgemm | tar -x -C abold`) and this tree (new), in
# turns on one loan. Run from the repository root after the prelude:
#   bash results/h100/call/reads-b-split/run.sh "1"
set -u
OUT=${OUT:-/tmp/reads-b-split}
mkdir -p "$OUT"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='cuda').key)")
cmd="python3 -m clgemm tune --device H100 --backend cuda --rungs tiled --shapes 64x4096x4096 --only PIPELINE=0 --time 60 --database clgemm/tuning/$key.json"
{ echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"; CLGEMM_RESULTS=/tmp/j timeout 150 $cmd 2>&1 | grep -v "evaluated, "; } > "$OUT/tune-64-cuda.txt"
cp "clgemm/tuning/$key.json" "$OUT/"
for turn in $1; do
  for v in old new; do
    dir=$root; [ $v = old ] && dir=$root/abold
    for be in cuda opencl; do
      cmd="python3 -m clgemm bench --call --device H100 --backend $be --sizes classes --c-given --json $OUT/classes-$be-$turn-$v.json"
      { echo "$head ($v: ${v/new/this tree}${v/old/ package of 0f0d0e1}); $(date -u +%FT%TZ): $cmd"
        (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 120 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } \
        > "$OUT/classes-$be-$turn-$v.txt"
      echo "turn $turn $v $be: $(grep 'geo-mean' "$OUT/classes-$be-$turn-$v.txt")"
    done
  done
done
