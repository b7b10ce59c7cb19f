#!/usr/bin/env bash
# The library's call tests with the H100 and then the Xeon as the test device (strided views,
# offsets and transposes, C sharing memory with an operand, out-of-order queues, repeated calls,
# stacks; the CUDA path on the H100), then where a call on NumPy arrays spends its time on the
# Xeon (scripts/cpu_call_timeline.py, on its family's tuning). From the repository root after the
# prelude; into $OUT/call-tests.tgz, packed again after each step:
#   bash results/h100/call-tests/run.sh ROUNDS
set -u
rounds=$1
W=${OUT:-/tmp}/call-tests
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf call-tests.tgz.part call-tests && mv call-tests.tgz.part call-tests.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 140 "-q -p no:cacheprovider $calls"
pack
bash scripts/logged_run.sh "$W/xeon-timeline.txt" 120 python3 scripts/cpu_call_timeline.py xeon "$rounds" 1024 2048 4096
pack
rm -rf "$W"
