#!/usr/bin/env bash
# The GPU tests step of scripts/gpu_call_bench.sh, repeated with PoCL's cache emptied before each
# run, every wrong result of tests/test_skinny.py saved whole by dumpwrong.py into $OUT. From the
# repository root after the prelude: BUDGET=510 bash results/h100/wave-launch/skinny-repeat/cold/run.sh
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$(cd "$(dirname "$0")" && pwd):${PYTHONPATH:-} XDG_DATA_HOME=/tmp/repro-data
gpu=H200
end=$(( $(date +%s) + ${BUDGET:-480} ))
i=0
clinfo 2>/dev/null | grep -i "platform version\|device name" | head; python3 -c "import pyopencl as cl; [print(p.name, p.version) for p in cl.get_platforms()]"
while [ $(( $(date +%s) + 150 )) -lt $end ]; do
  i=$((i+1)); export POCL_CACHE_DIR=/tmp/pocl-cache-$i; rm -rf "$POCL_CACHE_DIR"
  echo "=== run $i $(date -u +%T)"
  timeout 200 env CLGEMM_TEST_DEVICE="$gpu" python3 -m pytest -p dumpwrong -m "cuda or not cuda" -q \
     -rs tests/test_cuda.py tests/test_cuda_gemm.py tests/test_direct.py tests/test_gemm_api.py \
     tests/test_lookup.py tests/test_every_device.py tests/test_rungs_files.py \
     tests/test_rungs_upper.py tests/test_gemm_queues.py tests/test_gemm_overlap.py \
     tests/test_user_tuning.py tests/test_python_api.py tests/test_gemm_stacks.py \
     tests/test_skinny.py -p no:cacheprovider > $OUT/run-$i.log 2>&1
  echo "rc $?"; tail -n 3 $OUT/run-$i.log; grep -h "^FAILED\|SAVED" $OUT/run-$i.log
done
