#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root, with the package before the
# change unpacked in OLD (`git archive 67ca0b2 clgemm | tar x -C OLD`): on the host's Xeon
# through PoCL 5.0, on its family's tuning, gemm()'s call at 1024 and 2048 cubed part by part
# (scripts/cpu_call_timeline.py, C given) before and after in turns, three times each; the
# panels' pack alone on a cold cache by blocks of a panel and by whole columns
# (scripts/pack_columns_ab.py); `bench --call` on NumPy arrays at 1024-4096 cubed beside NumPy.
# Into $OUT/pack-columns.
#   bash results/xeon/pack-columns/run.sh OLD
set -u
old=$1 W=$OUT/pack-columns
mkdir -p "$W"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=/tmp/clgemm-data
head() { echo "# $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader)'s host CPU through PoCL 5.0; at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
quiet() { grep -v "CompilerWarning\|_prg.build"; }
{ head; echo "PYTHONPATH=OLD (67ca0b2) and this tree in turns: python3 scripts/cpu_call_timeline.py xeon 9 1024 2048"
  for i in 1 2 3; do
    echo "before:"; PYTHONPATH=$old:${PYTHONPATH:-} timeout 150 python3 scripts/cpu_call_timeline.py xeon 9 1024 2048 2>&1 | quiet
    echo "after:"; timeout 150 python3 scripts/cpu_call_timeline.py xeon 9 1024 2048 2>&1 | quiet
  done; } > "$W/timeline.txt"
{ head; for n in 1024 2048; do
    echo "python3 scripts/pack_columns_ab.py xeon $n 16 25"
    timeout 120 python3 scripts/pack_columns_ab.py xeon $n 16 25 2>&1 | quiet; done; } > "$W/pack.txt"
{ head; echo "python3 -m clgemm bench --call --device xeon --arrays numpy --sizes 1024,2048,4096 --json call.json"
  timeout 200 python3 -m clgemm bench --call --device xeon --arrays numpy \
    --sizes 1024,2048,4096 --json "$W/call.json" 2>&1 | quiet; } > "$W/call.txt"
tail -n 3 "$W/timeline.txt" "$W/pack.txt" "$W/call.txt"
