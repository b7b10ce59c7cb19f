#!/usr/bin/env bash
# With the tiled kernel for any size splitting K where its tiles of C leave the device idle:
# the library's call tests with the H100 and then the Xeon as the test device; the tiled kernel
# for any size tuned for SECONDS at 1000 cubed on each backend among larger tiles (the tuner
# measures each configuration split as gemm() would split it) into the shipped databases; then
# verify's quick sweep on both backends with them. From the repository root after the prelude;
# into $OUT/any-size-split.tgz, packed again after each step:
#   bash results/h100/any-size-split/run.sh SECONDS
set -u
seconds=$1
W=${OUT:-/tmp}/any-size-split
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf any-size-split.tgz.part any-size-split && mv any-size-split.tgz.part any-size-split.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 120 "-q -p no:cacheprovider $calls"
pack
large="--only TSM=64,128 --only TSN=64,128 --only WPTM=4,8 --only WPTN=4,8"
for be in cuda opencl; do
  RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-$be-1000.txt" $be "$seconds" "--shapes 1000 $large"
  pack
done
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
  pack
done
rm -rf "$W"
