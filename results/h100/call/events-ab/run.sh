#!/usr/bin/env bash
# A repeated OpenCL call into one C, with C's events kept to the last launch (new) and as
# pyopencl's add_event grows them (old: the package of an earlier commit, unpacked with
# `git archive <commit> clgemm | tar -x -C abold`), in turns on one loan: the 64 cubed call's
# host time (scripts/launch_floor.py) and `bench --call --sizes small` (and stacks, where asked),
# both with the same databases. Run from the repository root after the prelude:
#   bash results/h100/call/events-ab/run.sh "1 2" "small stacks"
set -u
OUT=${OUT:-/tmp/events-ab}
mkdir -p "$OUT"
root=$PWD
for turn in $1; do
  for v in old new; do
    dir=$root; [ $v = old ] && dir=$root/abold
    (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} python3 "$root/scripts/launch_floor.py" H100 opencl 64 64 64 3000 \
       | head -2 > "$OUT/floor-$turn-$v.txt" 2>&1)
    for s in $2; do
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} python3 -m clgemm bench --call --device H100 --backend opencl \
         --sizes $s --c-given --json "$OUT/$s-$turn-$v.json" > "$OUT/$s-$turn-$v.txt" 2>&1)
    done
    echo "turn $turn $v done"
  done
done
