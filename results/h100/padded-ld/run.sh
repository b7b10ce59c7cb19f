#!/usr/bin/env bash
# With the kernel for any size reading operands packed whole vectors apart where M or N is off
# its vector width: the kernels' tests of both tiled kernels on both backends, the library's call
# tests with the H100 and the Xeon as the test device, verify's quick sweep on both backends; then
# sizes off the vector width, and 1000 cubed beside them, C given, device arrays, in TURNS with
# the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after
# the prelude; into $OUT/padded-ld.tgz, packed again after each step:
#   bash results/h100/padded-ld/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/padded-ld
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf padded-ld.tgz.part padded-ld && mv padded-ld.tgz.part padded-ld.tgz); }
kernels="-q -p no:cacheprovider tests/test_rungs_upper.py tests/test_rungs_files.py"
bash scripts/device_tests.sh "$W/tests-kernels-opencl.txt" H100 120 "$kernels"
CLGEMM_TEST_BACKEND=cuda bash scripts/device_tests.sh "$W/tests-kernels-cuda.txt" H100 120 "$kernels"
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 120 "-q -p no:cacheprovider $calls"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
sizes=1000,999,1001,1002,999x1001x997,777,2047,301x301x10001,4001x101x4001,101x4001x4001
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "odd-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "odd-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
