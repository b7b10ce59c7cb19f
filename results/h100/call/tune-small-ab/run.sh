#!/usr/bin/env bash
# The direct kernel's CUDA entries of the tune-small step, measured in turns on one loan: repeated
# small calls and stacks with the CUDA database as it was after that step (cur) and with some of
# those entries taken out again: 128 cubed (no128), 128 and 256 (no128-256), 128 and 512
# (only256), all three (old: the database before the step). Run from the repository root after
# the prelude, with the database of the step in place:
#   bash results/h100/call/tune-small-ab/run.sh "cur no128 no128-256 old" run1
#   bash results/h100/call/tune-small-ab/run.sh "only256 old only256 old" run2
set -u
f=clgemm/tuning/cuda-nvidia-nvidia-h100-80gb-hbm3-13.0-runtime-13.2.json
variants=$1
OUT=${OUT:-/tmp/tune-small-ab}
mkdir -p "$OUT" /tmp/tune-small-ab-db
cp $f /tmp/cur.json
for v in cur no128 no128-256 only256 old; do
  python3 - "$v" <<'PY'
import json, sys
v = sys.argv[1]
drop = {"cur": [], "no128": [128], "no128-256": [128, 256], "only256": [128, 512],
        "old": [128, 256, 512]}[v]
d = json.load(open("/tmp/cur.json"))
d["entries"] = [e for e in d["entries"]
                if not (e["rung"] == 11 and e["shape"] in [[s, s, s] for s in drop])]
json.dump(d, open(f"/tmp/tune-small-ab-db/{v}.json", "w"), indent=1)
PY
done
i=0
for v in $variants; do
  i=$((i+1))
  cp /tmp/tune-small-ab-db/$v.json $f
  python3 -c "
from clgemm.library import gemm as api
from clgemm.library.stacks import stack_kernel
be = api.backend_for('H100', 'cuda')
print('$v', 'stack 64:', stack_kernel(be, 64, 64, 64), 'choice 64:', api.choose_kernel(be.device, 64, 64, 64).params, 'choice 128:', api.choose_kernel(be.device, 128, 128, 128).params)
"
  for s in stacks small; do
    python3 -m clgemm bench --call --device H100 --backend cuda --sizes $s --c-given \
      --json "$OUT/$2-$i-$v-$s.json" > "$OUT/$2-$i-$v-$s.txt" 2>&1
  done
done
cp /tmp/cur.json $f
