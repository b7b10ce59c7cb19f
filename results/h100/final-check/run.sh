#!/usr/bin/env bash
# At the session's last commit: the library's call tests with the H100 and with the Xeon as
# the test device. From the repository root after the prelude; into $OUT/:
#   bash results/h100/final-check/run.sh
set -u
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "${OUT:-/tmp}/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
bash scripts/device_tests.sh "${OUT:-/tmp}/tests-xeon.txt" xeon 100 "-q -p no:cacheprovider $calls tests/test_gemm_host_hot.py"
