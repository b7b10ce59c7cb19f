#!/usr/bin/env bash
# The 16-core Xeon through PoCL 5.0 (its family's tuning), NumPy arrays, small squares, with the
# package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns: whether a small product
# whose direct configuration leaves cores idle runs faster on the packing kernels. Into
# $OUT/idle.tgz:  bash results/xeon/idle-cores/run.sh "1 2 3"
set -u
W=${OUT:-/tmp}/idle
mkdir -p "$W"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for turn in $1; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    name=idle-xeon-$turn-$v
    cmd="python3 -m clgemm bench --call --device xeon --arrays numpy --sizes 64,128,256,384,512 --json $W/$name.json"
    { echo "# the GPU machine's 16-core Xeon, PoCL 5.0; at commit ${COMMIT:-?} ($v: $what); $(date -u +%FT%TZ): $cmd"
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"); } > "$W/$name.txt"
    echo "turn $turn $v: $(grep 'geo-mean' "$W/$name.txt")"
  done
done
cd "$(dirname "$W")" && tar czf idle.tgz "$(basename "$W")" && rm -rf "$W"
