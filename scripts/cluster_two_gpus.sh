#!/usr/bin/env bash
# The cluster tune on two GPUs of one machine against a tune on one of them: run from the
# repository root, after the prelude where it is the device machine (with dask's wheels:
# ../shared/bin/gpu-wheels dask distributed tornado zict tblib locket partd).
#   bash scripts/cluster_two_gpus.sh [STEPS]
# STEPS (default: all of them, in order):
#   budget      the tiled kernel at SIZE cubed, BUDGET evaluations of one seed: a tune on one GPU
#               as a user with one GPU runs it (no cluster), then a local cluster of one worker
#               per GPU; wall times, evaluations per minute, best found
#   one-worker  the same search on a local cluster of one worker: what the cluster itself costs
#   exhaustive  a small space (rung 6 at 2048 cubed, TSK=16: a few hundred configurations after
#               the funnel) measured whole on one GPU and on two: the same set, each once
#   kill        the two-GPU budget run with one worker killed after KILL_AFTER records and the
#               tune stopped (Ctrl-C) after STOP_AFTER, then the same command with --resume:
#               nothing lost, every configuration once, BUDGET in all
# BACKEND (cuda, the default, or opencl), BUDGET (200), SIZE (4096) and KIND (GPU: the device
# type; CPU tries the script on one machine's CPU device, its workers sharing it) change them.
# Each step's output, with scripts/cluster_tune_check.py's check of its journals, goes to $OUT;
# scripts/cluster_two_gpus_table.py "$OUT" then writes the table.
set -u
OUT=${OUT:-/tmp/two-gpus}
mkdir -p "$OUT"
BACKEND=${BACKEND:-cuda}
BUDGET=${BUDGET:-200}
SIZE=${SIZE:-4096}
KIND=${KIND:-GPU}
KILL_AFTER=${KILL_AFTER:-40}
STOP_AFTER=${STOP_AFTER:-120}
EXHAUSTIVE=${EXHAUSTIVE:-"--rungs 6 --size 2048 --only TSK=16"}
steps=${1:-budget exhaustive kill}
# the first device of the kind on the backend, and how many of its model there are
read -r first count < <(python3 -m clgemm devices --json - | python3 -c "import json, sys
ds = [d for d in json.load(sys.stdin) if d['backend'] == '$BACKEND' and d['type'] == '$KIND']
print(ds[0]['index'], sum(d['key'] == ds[0]['key'] for d in ds))")
echo "device $first, $count of its model on $BACKEND" | tee "$OUT/devices.txt"
python3 -m clgemm devices >> "$OUT/devices.txt" 2>&1
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv >> "$OUT/devices.txt" \
  2>&1 || true
python3 - >> "$OUT/devices.txt" 2>&1 <<'PY' || true
import importlib.metadata as meta, platform
found = []
for name in ("clgemm", "dask", "distributed", "cupy", "cupy-cuda12x", "cupy-cuda13x", "pyopencl"):
    try:
        found.append(f"{name} {meta.version(name)}")
    except meta.PackageNotFoundError:
        pass
print("python", platform.python_version() + ";", ", ".join(found))
PY
echo "commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}" >> "$OUT/devices.txt"
# two workers: one per GPU where there are two of the model (else they share the one device,
# which only tries the script)
two=2
tune=(--device "$first" --backend "$BACKEND" --confirm 3 --seed 1 --json -)
budget=(--rungs tiled --size "$SIZE" --budget "$BUDGET" --strategy annealing)

run() {  # NAME RESULTS CHECK-ARGS... -- TUNE-ARGS...: one tune, checked, its output kept
  local name=$1 results=$2; shift 2
  rm -rf "$results"
  CLGEMM_RESULTS=$results timeout 900 python3 scripts/cluster_tune_check.py "$@" \
    > "$OUT/$name.txt" 2>&1
  echo "$name: exit $?" | tee -a "$OUT/summary.txt"
  keep "$name" "$results"
}

keep() {  # NAME RESULTS: the run's journal beside its output
  for j in "$2"/journals/*/*.jsonl; do cp "$j" "$OUT/$1.jsonl"; done 2>/dev/null || true
}

for step in $steps; do
  case $step in
    budget)
      run budget-one-gpu /tmp/tg-b1 -- "${tune[@]}" "${budget[@]}"
      run budget-two-gpus /tmp/tg-b2 -- "${tune[@]}" "${budget[@]}" --cluster --workers "$two"
      ;;
    one-worker)
      run budget-one-worker /tmp/tg-bw -- "${tune[@]}" "${budget[@]}" --cluster --workers 1
      ;;
    exhaustive)
      # shellcheck disable=SC2086  # the space's options are words
      run exhaustive-one-gpu /tmp/tg-e1 -- "${tune[@]}" $EXHAUSTIVE --exhaustive
      # shellcheck disable=SC2086
      run exhaustive-two-gpus /tmp/tg-e2 -- "${tune[@]}" $EXHAUSTIVE --exhaustive --cluster \
        --workers "$two"
      python3 - /tmp/tg-e1 /tmp/tg-e2 <<'PY' | tee "$OUT/exhaustive-sets.txt"
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
      CLGEMM_RESULTS=/tmp/tg-k timeout 900 python3 scripts/cluster_tune_check.py \
        --kill-device "$first" --kill-after "$KILL_AFTER" --stop-after "$STOP_AFTER" -- \
        "${tune[@]}" "${budget[@]}" --cluster --workers "$two" > "$OUT/kill.txt" 2>&1
      echo "kill: exit $?" | tee -a "$OUT/summary.txt"
      CLGEMM_RESULTS=/tmp/tg-k timeout 900 python3 scripts/cluster_tune_check.py -- \
        "${tune[@]}" "${budget[@]}" --cluster --workers "$two" --resume \
        > "$OUT/kill-resume.txt" 2>&1
      echo "kill-resume: exit $?" | tee -a "$OUT/summary.txt"
      keep kill-resume /tmp/tg-k
      ;;
  esac
done
