#!/usr/bin/env bash
# With the tiled kernel splitting a short K where its tiles leave compute units idle and the
# databases of this tree: verify's quick sweep on both backends, the library's call tests with
# the H100 as the test device, then the squares from 256 to 1536 cubed, C given, device arrays,
# in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new). From the
# repository root after the prelude; into $OUT/short-k-split.tgz, packed again after each step:
#   bash results/h100/short-k-split/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/short-k-split
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf short-k-split.tgz.part short-k-split && mv short-k-split.tgz.part short-k-split.tgz); }
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 60 python3 -m clgemm verify --device H100 --backend $be --quick
done
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_cuda_gemm.py tests/test_gemm_stacks.py"
pack
sizes=256,512,768,1000,1024,1536
TURN_TIMEOUT=90 bash scripts/turns.sh "$W" "$turns" \
  "squares-cuda=--device H100 --backend cuda --sizes $sizes --c-given" \
  "squares-opencl=--device H100 --backend opencl --sizes $sizes --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
pack
rm -rf "$W"
