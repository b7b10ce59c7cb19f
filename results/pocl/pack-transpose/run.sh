#!/usr/bin/env bash
# The panels' pack alone (scripts/pack_panels_bench.py) at SIZE in TURNS, the package of
# $OLD_COMMIT unpacked into ./abold (old) and then this tree (new), on this machine's CPU
# device through PoCL. From the repository root:
#   OLD_COMMIT=... bash results/pocl/pack-transpose/run.sh "TURNS" SIZE
set -u
turns=$1 size=$2
W=results/pocl/pack-transpose
for turn in $turns; do
  for v in old new; do
    dir=$PWD; [ $v = old ] && dir=$PWD/abold
    { echo "# $(date -u +%FT%TZ), at commit ${COMMIT:-?} ($v: $([ $v = old ] && echo "package of ${OLD_COMMIT:-?}" || echo 'this tree')): python scripts/pack_panels_bench.py 0 $size"
      PYTHONPATH=$dir python scripts/pack_panels_bench.py 0 "$size" 2>&1 | grep -v "Warning\|_prg.build"; } \
      > "$W/pack-$size-$turn-$v.txt"
    tail -n 1 "$W/pack-$size-$turn-$v.txt"
  done
done
