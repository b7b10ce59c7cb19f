#!/usr/bin/env bash
# gemm()'s calls in TURNS with the package of $OLD_COMMIT (./abold: a padded product ran K
# whole, so tiles gemm() would split K for at the padded shape were left out of it) and this
# tree (at skinny shapes a padded product split as at its padded shape, an operand whose own
# sizes are not padded read where it lies), on both backends, C given, device arrays:
# 4096xNx4096 and Nx4096x4096 with N of 16-56 and a sample of the other products the change
# moves by the lookup's reckoning (a side of 64). Then the call tests with the H100 and with
# the Xeon as the test device and verify's quick sweep on both backends. From the repository
# root after the prelude; into $OUT/padded-split-k.tgz and $OUT/:
#   bash results/h100/padded-split-k/run.sh "TURNS"
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
W=${OUT:-/tmp}/padded-split-k
shapes=4096x48x4096,4096x40x4096,4096x56x4096,4096x24x4096,4096x16x4096,16x4096x4096,24x4096x4096,48x4096x4096,2000x64x16000,2500x64x16000,64x3000x16000,64x3000x4000,64x1500x1000,1500x64x1000
TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$1" \
  "skinny-cuda=--device H100 --backend cuda --sizes $shapes --c-given" \
  "skinny-opencl=--device H100 --backend opencl --sizes $shapes --c-given"
(cd "$(dirname "$W")" && tar czf padded-split-k.tgz padded-split-k && rm -rf padded-split-k)
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "${OUT:-/tmp}/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
bash scripts/device_tests.sh "${OUT:-/tmp}/tests-xeon.txt" xeon 100 "-q -p no:cacheprovider $calls tests/test_gemm_host_hot.py"
export PYTHONPATH=$PWD:${PYTHONPATH:-}
for backend in cuda opencl; do
  bash scripts/logged_run.sh "${OUT:-/tmp}/verify-$backend.txt" 110 \
    python3 -m clgemm verify --device H100 --backend $backend --quick
done
