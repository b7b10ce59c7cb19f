#!/usr/bin/env bash
# With the band order of tiles written once (BANDED_TILE in common.h) and the tables of the
# course counting slices: the tiled kernels' order and pipeline tests on both backends, the
# library's call tests with the H100 and the Xeon as the test device, verify's quick sweep on
# both backends; then the calls of stored configurations that take their tiles in bands (1024
# and 4096 cubed on the tiled kernel, 1000 cubed on the one for any size), C given, device
# arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the
# repository root after the prelude; into $OUT/banded-tile.tgz, packed again after each step:
#   bash results/h100/banded-tile/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/banded-tile
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf banded-tile.tgz.part banded-tile && mv banded-tile.tgz.part banded-tile.tgz); }
kernels="-q -p no:cacheprovider tests/test_rungs_upper.py::test_tiled_orders_correct tests/test_rungs_upper.py::test_tiled_pipeline_correct"
bash scripts/device_tests.sh "$W/tests-kernels-opencl.txt" H100 90 "$kernels"
CLGEMM_TEST_BACKEND=cuda bash scripts/device_tests.sh "$W/tests-kernels-cuda.txt" H100 90 "$kernels"
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 120 "-q -p no:cacheprovider $calls"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
sizes=1024,4096,1000
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "banded-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "banded-opencl=--device H100 --backend opencl --sizes $sizes --c-given"
pack
rm -rf "$W"
