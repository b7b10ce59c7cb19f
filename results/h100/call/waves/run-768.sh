#!/usr/bin/env bash
# The tiled kernel on CUDA tuned at 768 cubed for 40 s into the shipped database (its slot's
# entry was slower there than the 64 x 64 tiles measured at 1024 cubed, which the count of
# waves no longer expects above it), then 640-1536 cubed with the package of $OLD_COMMIT (old,
# ./abold) and this tree (new) in turns, C given, on both backends. Into $OUT/w768.tgz:
#   bash results/h100/call/waves/run-768.sh "1 2 3"
set -u
W=${OUT:-/tmp}/w768
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='cuda').key)")
cmd="python3 -m clgemm tune --device H100 --backend cuda --rungs tiled --shapes 768x768x768 --time 40 --database clgemm/tuning/$key.json"
{ echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
  CLGEMM_RESULTS=/tmp/j timeout 120 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } > "$W/tune-768-cuda.txt"
grep -E "stored" "$W/tune-768-cuda.txt" | tail -2
cp "clgemm/tuning/$key.json" "$W/"
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    for be in cuda opencl; do
      name=w768-$be-$turn-$v
      cmd="python3 -m clgemm bench --call --device H100 --backend $be --sizes 640,768,1024,1536 --c-given --json $W/$name.json"
      { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
        (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } \
        > "$W/$name.txt"
      echo "turn $turn $v $be: $(grep 'geo-mean' "$W/$name.txt")"
    done
  done
done
cd "$(dirname "$W")" && tar czf w768.tgz "$(basename "$W")" && rm -rf "$W"
