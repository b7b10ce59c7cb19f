#!/usr/bin/env bash
# The tiled kernel tuned on each stack of `bench --call --sizes stacks` (1000 x 64 cubed, 100 x
# 256 cubed, 10 x 1024 cubed), SECONDS each, measured as a stack (its STACKED_B form), into the
# shipped databases of both H100 backends; then verify's quick sweep of the direct and tiled
# kernels on both (every stored stack configuration in its stacked form, checked against
# float64) and the stack tests on the H100. Into $OUT/stt.tgz:
#   bash results/h100/call/stack-tune-tiled/run-tune.sh SECONDS
set -u
W=${OUT:-/tmp}/stt
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for backend in cuda opencl; do
  for s in 1000x64x64x64 100x256x256x256 10x1024x1024x1024; do
    bash scripts/tune_shipped.sh "$W/tune-$s-$backend.txt" $backend "$1" "--shapes $s"
  done
done
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for backend in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $backend --rungs direct,tiled --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"
    timeout 80 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$backend.txt"
  tail -2 "$W/verify-$backend.txt"
done
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 120 \
  "-m 'cuda or not cuda' -q -rs tests/test_gemm_stacks.py tests/test_tuner_stacks.py tests/test_verify.py"
cd "$(dirname "$W")" && tar czf stt.tgz stt && rm -rf stt
