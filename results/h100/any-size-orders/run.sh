#!/usr/bin/env bash
# With the tiled kernel for any size taking the tiled kernel's order of tiles and unrolled tile
# depth: what it gives up against the tiled kernel at 1024 cubed (scripts/edge_cost.py, ROUNDS
# rounds); the kernel tuned for SECONDS at 1000 cubed on each backend among tiles of 64 and 128
# into the shipped databases; the library's call tests with the H100 and the Xeon as the test
# device and verify's quick sweep on both backends with them; then 1000 cubed and the shapes
# that run on it with K split, C given, device arrays, in TURNS with the package of $OLD_COMMIT
# (old, ./abold) and this tree (new). From the repository root after the prelude; into
# $OUT/any-size-orders.tgz, packed again after each step:
#   bash results/h100/any-size-orders/run.sh ROUNDS SECONDS "TURNS"
set -u
rounds=$1 seconds=$2 turns=$3
W=${OUT:-/tmp}/any-size-orders
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf any-size-orders.tgz.part any-size-orders && mv any-size-orders.tgz.part any-size-orders.tgz); }
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/edge-$be-1024.txt" 120 python3 scripts/edge_cost.py H100 $be "$rounds" 1024
done
pack
large="--only TSM=64,128 --only TSN=64,128 --only WPTM=4,8 --only WPTN=4,8"
for be in cuda opencl; do
  RUNGS=tiled-any bash scripts/tune_shipped.sh "$W/tune-$be-1000.txt" $be "$seconds" "--shapes 1000 $large"
  pack
done
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 120 "-q -p no:cacheprovider $calls"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
sizes=1000,1000x1000x500,500x500x4000,300x300x10000,250x250x16000,1000x100x1000,100x4000x4000,4000x100x4000
TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$turns" \
  "any-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "any-opencl=--device H100 --backend opencl --sizes $sizes --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
pack
rm -rf "$W"
