#!/usr/bin/env bash
# Stacks of products with the direct kernel's stack slots (new: this tree, its databases holding
# the entries the `tune` step stores) and without (old: the package of an earlier commit with
# its own databases, unpacked with `git archive <commit> clgemm | tar -x -C abold`), in turns on
# one loan: `bench --call --sizes stacks` on both backends. Run from the repository root after
# the prelude:
#   bash results/h100/call/stack-slot/run.sh tune          # the stack's tune on each backend
#   bash results/h100/call/stack-slot/run.sh "1 2"         # the turns
set -u
OUT=${OUT:-/tmp/stack-slot}
mkdir -p "$OUT"
root=$PWD
if [ "$1" = tune ]; then
  for be in cuda opencl; do
    key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='$be').key)")
    CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm tune --device H100 --backend $be \
      --rungs direct --shapes 1000x64x64x64 --time ${STACK_TUNE_S:-60} \
      --database "$root/clgemm/tuning/$key.json" > "$OUT/tune-$be.txt" 2>&1
    echo "tune $be: $?"
    mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
  done
  exit 0
fi
for turn in $1; do
  for be in cuda opencl; do
    for v in old new; do
      dir=$root; [ $v = old ] && dir=$root/abold
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} python3 -m clgemm bench --call --device H100 \
         --backend $be --sizes stacks --c-given --json "$OUT/stacks-$be-$turn-$v.json" \
         > "$OUT/stacks-$be-$turn-$v.txt" 2>&1)
      echo "turn $turn $be $v: $?"
    done
  done
done
