#!/usr/bin/env bash
# The cluster tune on two GPUs of one machine against one of them: run from the repository root,
# after the prelude where it is the device machine (with dask's wheels: ../shared/bin/gpu-wheels
# dask distributed tornado zict tblib locket partd), on a machine with two GPUs of one model.
#   bash scripts/cluster_two_gpus.sh [STEPS]
# STEPS (default: all of them, in order):
#   budget      the tiled kernel at 4096 cubed, 200 evaluations of one seed: a local cluster of
#               one worker (one GPU), then of one per GPU (two); wall times and best found
#   exhaustive  a small space (rung 6 at 2048 cubed, as its funnel leaves it) measured whole on
#               one GPU and on two: the sets of configurations measured must be the same, once
#   kill        the two-GPU budget run with one worker killed after KILL_AFTER records, then
#               run again with --resume: nothing lost, every configuration once
# BACKEND (cuda, the default, or opencl), BUDGET (200), SIZE (4096) and KIND (GPU: the device
# type, CPU to try the script on one machine's CPU device with several workers) change them.
# Each step's output, and scripts/cluster_tune_check.py's check of its journals, go to $OUT.
set -u
OUT=${OUT:-/tmp/two-gpus}
mkdir -p "$OUT"
BACKEND=${BACKEND:-cuda}
BUDGET=${BUDGET:-200}
SIZE=${SIZE:-4096}
KIND=${KIND:-GPU}
KILL_AFTER=${KILL_AFTER:-40}
steps=${1:-budget exhaustive kill}
# the first device of the kind on the backend, and how many of its model there are
read -r first count < <(python3 -m clgemm devices --json - | python3 -c "import json, sys
ds = [d for d in json.load(sys.stdin) if d['backend'] == '$BACKEND' and d['type'] == '$KIND']
print(ds[0]['index'], sum(d['key'] == ds[0]['key'] for d in ds))")
echo "device $first, $count of its model on $BACKEND" | tee "$OUT/devices.txt"
python3 -m clgemm devices >> "$OUT/devices.txt" 2>&1
# two workers: one per GPU where there are two of the model (else they share the one device,
# which only tries the script)
two=2
tune=(--device "$first" --backend "$BACKEND" --confirm 3 --seed 1 --json -)

run() {  # NAME WORKERS RESULTS TUNE-ARGS...: one timed cluster tune, checked
  local name=$1 workers=$2 results=$3; shift 3
  local t0=$(date +%s.%N)
  CLGEMM_RESULTS=$results python3 scripts/cluster_tune_check.py -- "$@" --cluster \
    --workers "$workers" > "$OUT/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s" \
    | tee -a "$OUT/summary.txt"
}

for step in $steps; do
  case $step in
    budget)
      rm -rf /tmp/tg-b1 /tmp/tg-b2
      run budget-one-gpu 1 /tmp/tg-b1 "${tune[@]}" --rungs tiled --size "$SIZE" \
        --budget "$BUDGET" --strategy annealing
      run budget-two-gpus "$two" /tmp/tg-b2 "${tune[@]}" --rungs tiled --size "$SIZE" \
        --budget "$BUDGET" --strategy annealing
      ;;
    exhaustive)
      rm -rf /tmp/tg-e1 /tmp/tg-e2
      run exhaustive-one-gpu 1 /tmp/tg-e1 "${tune[@]}" --rungs 6 --size 2048 --exhaustive
      run exhaustive-two-gpus "$two" /tmp/tg-e2 "${tune[@]}" --rungs 6 --size 2048 --exhaustive
      python3 - /tmp/tg-e1 /tmp/tg-e2 <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
from pathlib import Path
sets = []
for root in sys.argv[1:]:
    [journal] = Path(root).glob("journals/*/*.jsonl")
    records = [json.loads(l) for l in journal.read_text().splitlines()[1:]]
    sets.append([json.dumps(r["config"], sort_keys=True) for r in records
                 if r.get("kind") == "search"])
one, two = sets
print(f"exhaustive: one GPU {len(one)} records ({len(set(one))} configurations), two GPUs "
      f"{len(two)} ({len(set(two))}); the same set: {set(one) == set(two)}")
PY
      ;;
    kill)
      rm -rf /tmp/tg-k
      CLGEMM_RESULTS=/tmp/tg-k python3 scripts/cluster_tune_check.py --kill-device "$first" \
        --kill-after "$KILL_AFTER" -- "${tune[@]}" --rungs tiled --size "$SIZE" \
        --budget "$BUDGET" --strategy annealing --cluster --workers "$two" \
        > "$OUT/kill.txt" 2>&1
      echo "kill: exit $?" | tee -a "$OUT/summary.txt"
      CLGEMM_RESULTS=/tmp/tg-k python3 scripts/cluster_tune_check.py -- "${tune[@]}" \
        --rungs tiled --size "$SIZE" --budget "$BUDGET" --strategy annealing --cluster \
        --workers "$two" --resume > "$OUT/kill-resume.txt" 2>&1
      echo "kill, then --resume: exit $?" | tee -a "$OUT/summary.txt"
      ;;
  esac
done
