#!/usr/bin/env bash
# The cluster tune on the device machine: its GPU (NVIDIA's OpenCL) and its CPU (PoCL) as the two
# workers of one local Dask cluster, each tuning its own device at once (--device all
# --backend opencl --cluster), then the same with the CPU's worker killed in the middle of the
# run. Each run's journals are checked by scripts/cluster_tune_check.py: every configuration
# recorded once, every record naming the device and worker it ran on. Dask and distributed come
# as wheels (../shared/bin/gpu-wheels dask distributed tornado zict tblib locket partd). Run from
# the repository root after the prelude:
#   bash results/h100/cluster/run.sh
set -u
OUT=${OUT:-/tmp/cluster}
mkdir -p "$OUT"
python3 -m clgemm devices > "$OUT/devices.txt" 2>&1
cpu=$(python3 -m clgemm devices --json - | python3 -c "import json, sys
print(next(d['index'] for d in json.load(sys.stdin) if d['type'] == 'CPU'))")
args=(--device all --backend opencl --cluster --rungs tiled --size 1024
      --budget "${CLUSTER_BUDGET:-24}" --confirm 2 --json -)
CLGEMM_RESULTS=/tmp/cluster-both timeout 300 python3 scripts/cluster_tune_check.py -- \
  "${args[@]}" > "$OUT/both-devices.txt" 2>&1
echo "both devices: $?"
CLGEMM_RESULTS=/tmp/cluster-kill timeout 300 python3 scripts/cluster_tune_check.py \
  --kill-device "$cpu" --kill-after 4 -- "${args[@]}" > "$OUT/both-devices-kill.txt" 2>&1
echo "both devices, the CPU's worker killed: $?"
