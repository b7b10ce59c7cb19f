#!/usr/bin/env bash
# The tiled kernel on CUDA tuned at 3008 cubed (3000 cubed padded to 64 x 64 tiles), 60 s, into
# the shipped database, its search seeded with the same GPU's OpenCL entries (OpenCL ran 3000
# cubed on 64 x 64 tiles at 0.95x cuBLAS where CUDA's choice, 64 x 128, ran at 0.77x); then the
# large products no tile divides with the package of $OLD_COMMIT (old, ./abold) and this tree
# (new) in turns, C given, on CUDA. Into $OUT/p3.tgz:
#   bash results/h100/call/padded-3008/run.sh "1 2 3"
set -u
W=${OUT:-/tmp}/p3
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='cuda').key)")
cmd="python3 -m clgemm tune --device H100 --backend cuda --rungs tiled --shapes 3008x3008x3008 --time 60 --database clgemm/tuning/$key.json"
{ echo "$head; $(date -u +%FT%TZ): CLGEMM_RESULTS=/tmp/j $cmd"
  CLGEMM_RESULTS=/tmp/j timeout 200 $cmd 2>&1 | grep -v "evaluated, \|CompilerWarning\|_prg.build"; } > "$W/tune-3008-cuda.txt"
grep -E "stored" "$W/tune-3008-cuda.txt" | tail -1
cp "clgemm/tuning/$key.json" "$W/"
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    name=padded-cuda-$turn-$v
    cmd="python3 -m clgemm bench --call --device H100 --backend cuda --sizes 3000,4097,2500x3500x4500,2047 --c-given --json $W/$name.json"
    { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } > "$W/$name.txt"
    echo "turn $turn $v: $(grep 'geo-mean' "$W/$name.txt")"
  done
done
cd "$(dirname "$W")" && tar czf p3.tgz "$(basename "$W")" && rm -rf "$W"
