#!/usr/bin/env bash
# The library at the padded-product guard (a47c18a) and the tuner's stale-reader rule, on the
# device: the call tests with the H100 and with the Xeon as the test device, and verify's quick
# sweep on both of the H100's backends. From the repository root after the prelude; into $OUT/:
#   bash results/h100/guard-check/run.sh
set -u
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "${OUT:-/tmp}/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
bash scripts/device_tests.sh "${OUT:-/tmp}/tests-xeon.txt" xeon 100 "-q -p no:cacheprovider $calls tests/test_gemm_host_hot.py"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONPATH=$PWD:${PYTHONPATH:-}
for backend in cuda opencl; do
  bash scripts/logged_run.sh "${OUT:-/tmp}/verify-$backend.txt" 110 \
    python3 -m clgemm verify --device H100 --backend $backend --quick
done
