#!/usr/bin/env bash
# The shapes whose choice of kernel the count of waves changes on the H100 (640, 768 and 1536
# cubed on CUDA, 256 and 768 on OpenCL) and 1024 cubed, which it leaves, with the package of
# $OLD_COMMIT (old, unpacked into ./abold) and this tree (new) in turns on one loan, C given to
# every call; then the classes of shapes and the bench's set on both backends with this tree.
# Everything goes to $OUT/waves.tgz. Run from the repository root after the prelude:
#   bash results/h100/call/waves/run.sh "1 2 3"
set -u
W=${OUT:-/tmp}/waves
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    for be in cuda opencl; do
      name=waves-$be-$turn-$v
      cmd="python3 -m clgemm bench --call --device H100 --backend $be --sizes 256,640,768,1024,1536 --c-given --json $W/$name.json"
      { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
        (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } \
        > "$W/$name.txt"
      echo "turn $turn $v $be: $(grep 'geo-mean' "$W/$name.txt")"
    done
  done
done
cd "$(dirname "$W")" && tar czf waves.tgz "$(basename "$W")" && rm -rf "$W"
