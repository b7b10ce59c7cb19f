#!/usr/bin/env bash
# Tunes of SECONDS each into the shipped databases, among small tiles (--only TSM=16,32,64
# --only TSN=16,32 --only WPTM=1,2,4 --only WPTN=1,2,4): through OpenCL the tiled kernel and the
# direct kernel at 256 cubed, on the CUDA path the tiled kernel at 512 cubed; verify's quick
# sweep on both backends and the library's call tests with the H100 as the test device, with
# those databases; then the squares from 64 to 768 cubed, C given, device arrays, in TURNS with
# the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the repository root after
# the prelude; into $OUT/small-squares.tgz, packed again after each step:
#   bash results/h100/small-squares/run.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/small-squares
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf small-squares.tgz.part small-squares && mv small-squares.tgz.part small-squares.tgz); }
small="--only TSM=16,32,64 --only TSN=16,32 --only WPTM=1,2,4 --only WPTN=1,2,4"
bash scripts/tune_shipped.sh "$W/tune-opencl-tiled-256.txt" opencl "$seconds" "--shapes 256 $small"
RUNGS=direct bash scripts/tune_shipped.sh "$W/tune-opencl-direct-256.txt" opencl "$seconds" "--shapes 256"
bash scripts/tune_shipped.sh "$W/tune-cuda-tiled-512.txt" cuda "$seconds" "--shapes 512 $small"
pack
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 60 python3 -m clgemm verify --device H100 --backend $be --quick
done
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_cuda_gemm.py tests/test_gemm_stacks.py"
pack
sizes=64,128,256,512,768
TURN_TIMEOUT=90 bash scripts/turns.sh "$W" "$turns" \
  "small-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "small-opencl=--device H100 --backend opencl --sizes $sizes --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
pack
rm -rf "$W"
