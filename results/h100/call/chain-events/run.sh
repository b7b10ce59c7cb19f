#!/usr/bin/env bash
# A repeated OpenCL call of several launches queueing all but its last launch without an event:
# the tests of repeated calls and of C sharing memory on the H100's backends, the host time
# per call of shapes that take several launches, then the classes and the small squares on
# OpenCL with the package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns. Into
# $OUT/ce.tgz, from the repository root after the prelude:
#   bash results/h100/call/chain-events/run.sh "TURNS"
set -u
W=${OUT:-/tmp}/ce
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 120 "-m 'cuda or not cuda' -q -rs tests/test_gemm_repeated.py tests/test_gemm_overlap.py"
for s in "2048 2048 128" "4096 32 4096" "32 4096 4096" "512 512 16384"; do
  for v in old new; do
    dir=$PWD; [ $v = old ] && dir=$PWD/abold
    cmd="python3 scripts/profile_call.py H100 opencl $s 300 c"
    echo "$head ($v); $(date -u +%FT%TZ): $cmd"
    (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} ROWS=8 timeout 60 $cmd 2>&1 \
       | grep -v "Warn\|_prg" | head -3)
  done
done > "$W/host-per-call.txt"
grep "us per call" "$W/host-per-call.txt"
bash scripts/turns.sh "$W/turns" "$1" \
  classes-opencl="--device H100 --backend opencl --sizes classes --c-given" \
  small-opencl="--device H100 --backend opencl --sizes small --c-given"
cd "$(dirname "$W")" && tar czf ce.tgz ce && rm -rf ce
