#!/usr/bin/env bash
# A repeated call of several launches with its scratch kept (HotCall._quick_chain): its host
# time at 512 cubed and 2048x2048x32 with the tiled kernel's 512-cubed entry of
# ../tiled-512 (a database in ./abold/r512, as a user's tuning; scripts/profile_call.py), the
# new tests on the H100's backends, then the classes and the small squares on both backends with
# the package of $OLD_COMMIT (old, ./abold) and this tree (new) in turns. Into $OUT/qc.tgz:
#   bash results/h100/call/quick-chain/run.sh "TURNS"
set -u
W=${OUT:-/tmp}/qc
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for s in "512 512 512" "2048 2048 32"; do
  for v in old new; do
    dir=$PWD; [ $v = old ] && dir=$PWD/abold
    cmd="python3 scripts/profile_call.py H100 cuda $s 300 c"
    echo "$head ($v); $(date -u +%FT%TZ): CLGEMM_RESULTS=abold/r512 $cmd"
    (cd "$dir" && CLGEMM_RESULTS=$OLDPWD/abold/r512 PYTHONPATH=$dir:${PYTHONPATH:-} ROWS=8 \
       timeout 60 $cmd 2>&1 | grep -v "Warn\|_prg" | head -3)
  done
done > "$W/host-per-call.txt"
grep "us per call" "$W/host-per-call.txt"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 90 "-m 'cuda or not cuda' -q -rs tests/test_gemm_repeated.py tests/test_gemm_overlap.py"
bash scripts/turns.sh "$W" "$1" \
  classes-cuda="--device H100 --backend cuda --sizes classes --c-given" \
  classes-opencl="--device H100 --backend opencl --sizes classes --c-given" \
  small-cuda="--device H100 --backend cuda --sizes small --c-given" \
  small-opencl="--device H100 --backend opencl --sizes small --c-given"
cd "$(dirname "$W")" && tar czf qc.tgz qc && rm -rf qc
