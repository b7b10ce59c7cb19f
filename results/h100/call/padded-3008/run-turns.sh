#!/usr/bin/env bash
# The squares and large odd sizes whose choice the 2048 and 3008 cubed entries and the count
# of two groups per unit change on CUDA, and OpenCL's small squares, with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new) in turns, C given. Into $OUT/p5.tgz:
#   bash results/h100/call/padded-3008/run-turns.sh "1 2 3"
set -u
W=${OUT:-/tmp}/p5
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    for spec in cuda:768,896,1000,1024,1536,1792,2047,2048,3000,4097 opencl:64,128,256,768; do
      be=${spec%%:*}; sizes=${spec#*:}
      name=third-$be-$turn-$v
      cmd="python3 -m clgemm bench --call --device H100 --backend $be --sizes $sizes --c-given --json $W/$name.json"
      { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
        (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } > "$W/$name.txt"
      echo "turn $turn $v $be: $(grep 'geo-mean' "$W/$name.txt")"
    done
  done
done
cd "$(dirname "$W")" && tar czf p5.tgz "$(basename "$W")" && rm -rf "$W"
