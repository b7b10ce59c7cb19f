#!/usr/bin/env bash
# On this machine kind's 2-core CPU (PoCL 3.1), from the repository root, with the package
# before the change unpacked in OLD (`git archive 67ca0b2 clgemm | tar x -C OLD`): the panels'
# pack alone on a cold cache by blocks of a panel and down the columns
# (scripts/pack_columns_ab.py); gemm()'s call at 1024 and 2048 cubed part by part
# (scripts/cpu_call_timeline.py, C given) before and after in turns, three times each;
# `bench --call` on NumPy arrays at 1024-4096 cubed beside NumPy. Into DIR.
#   bash results/pocl/pack-columns/run.sh OLD DIR
set -u
old=$1 W=$2
mkdir -p "$W"
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
head() { echo "# $(nproc) cores, $($py -c 'import pyopencl as cl; print(cl.get_platforms()[0].version)'); at commit $(git rev-parse --short HEAD); $(date -u +%FT%TZ)"; }
{ head; for n in 1024 2048; do
    echo "python3 scripts/pack_columns_ab.py 0 $n 16 21"
    $py scripts/pack_columns_ab.py 0 $n 16 21 2>&1; done; } > "$W/pack.txt"
{ head; echo "PYTHONPATH=OLD (67ca0b2) and this tree in turns: python3 scripts/cpu_call_timeline.py 0 9 1024 2048"
  for i in 1 2 3; do
    echo "before:"; PYTHONPATH=$old $py scripts/cpu_call_timeline.py 0 9 1024 2048 2>&1
    echo "after:"; $py scripts/cpu_call_timeline.py 0 9 1024 2048 2>&1
  done; } > "$W/timeline.txt"
{ head; echo "python3 -m clgemm bench --call --device 0 --arrays numpy --sizes 1024,2048,4096 --json call.json"
  $py -m clgemm bench --call --device 0 --arrays numpy --sizes 1024,2048,4096 \
    --json "$W/call.json" 2>&1; } > "$W/call.txt"
