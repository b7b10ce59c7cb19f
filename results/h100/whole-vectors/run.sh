#!/usr/bin/env bash
# With the kernel for any size built with PADDED_LD on its vector width too (its operands lie
# whole vectors apart there already): the kernels' tests on both backends, the library's call
# tests with the H100 and the Xeon as the test device, verify's quick sweep on both backends;
# then the shapes that run on it, C given, device arrays, in TURNS with the package of
# $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after the prelude;
# into $OUT/whole-vectors.tgz, packed again after each step:
#   bash results/h100/whole-vectors/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/whole-vectors
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf whole-vectors.tgz.part whole-vectors && mv whole-vectors.tgz.part whole-vectors.tgz); }
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
sizes=1000,1000x1000x500,500x500x4000,300x300x10000,250x250x16000,1000x100x1000,100x4000x4000,4000x100x4000,999
TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "any-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "any-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
