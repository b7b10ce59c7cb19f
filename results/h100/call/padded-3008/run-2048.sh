#!/usr/bin/env bash
# After run.sh (its 3008 cubed entry in the tree's database): the tiled kernel on CUDA tuned at
# 2048 cubed, 60 s, into the shipped database (2047 cubed, padded to 2048, took the 3008 cubed
# entry and got slower), then the large odd sizes and 2048 cubed with the package of
# $OLD_COMMIT (old, ./abold: neither entry) and this tree (new: both) in turns, C given, on
# CUDA. Into $OUT/p4.tgz:  bash results/h100/call/padded-3008/run-2048.sh "1 2 3"
set -u
W=${OUT:-/tmp}/p4
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='cuda').key)")
cmd="python3 -m clgemm tune --device H100 --backend cuda --rungs tiled --shapes 2048x2048x2048 --time 60 --database clgemm/tuning/$key.json"
{ echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
  CLGEMM_RESULTS=/tmp/j timeout 200 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } > "$W/tune-2048-cuda.txt"
grep -E "stored" "$W/tune-2048-cuda.txt" | tail -1
cp "clgemm/tuning/$key.json" "$W/"
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    name=padded-cuda-$turn-$v
    cmd="python3 -m clgemm bench --call --device H100 --backend cuda --sizes 2047,2048,3000,4097,2500x3500x4500 --c-given --json $W/$name.json"
    { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } > "$W/$name.txt"
    echo "turn $turn $v: $(grep 'geo-mean' "$W/$name.txt")"
  done
done
cd "$(dirname "$W")" && tar czf p4.tgz "$(basename "$W")" && rm -rf "$W"
