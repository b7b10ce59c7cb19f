#!/usr/bin/env bash
# The tiled kernel on CUDA tuned on the stacks of `bench --call --sizes stacks` it runs (100 x
# 256 cubed, 10 x 1024 cubed), 45 s each, as stacks, into the shipped database; then those
# stacks with the package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns, C given,
# beside cp.matmul. Into $OUT/st.tgz:  bash results/h100/call/stack-tune/run.sh "1 2 3"
set -u
W=${OUT:-/tmp}/st
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='cuda').key)")
for shape in 100x256x256x256 10x1024x1024x1024; do
  cmd="python3 -m clgemm tune --device H100 --backend cuda --rungs tiled --shapes $shape --time 45 --database clgemm/tuning/$key.json"
  { echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
    CLGEMM_RESULTS=/tmp/j timeout 150 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } > "$W/tune-$shape-cuda.txt"
  grep -E "stored" "$W/tune-$shape-cuda.txt" | tail -1
done
cp "clgemm/tuning/$key.json" "$W/"
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    name=stacks-cuda-$turn-$v
    cmd="python3 -m clgemm bench --call --device H100 --backend cuda --sizes stacks --c-given --json $W/$name.json"
    { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } > "$W/$name.txt"
    echo "turn $turn $v: $(grep 'geo-mean' "$W/$name.txt")"
  done
done
cd "$(dirname "$W")" && tar czf st.tgz "$(basename "$W")" && rm -rf "$W"
