#!/usr/bin/env bash
# After the 4096-cubed entry moved to 128 x 128 tiles, 4097 cubed ran on it padded to 4224 (five
# waves of work-groups, the last a quarter full) instead of on the 64 x 64 entry padded to
# 4160, which the tune had replaced. This tunes the CUDA path at 4160 cubed, SECONDS, into the
# shipped database; then verify's quick sweep; gemm()'s calls over the large products in TURNS
# with the package of $OLD_COMMIT (./abold, the database before any of these tunes); and the
# H100's call tests. From the repository root after the prelude; into $OUT/grown-padded.tgz:
#   bash results/h100/grown-block/run-padded.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/grown-padded
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf grown-padded.tgz.part grown-padded && mv grown-padded.tgz.part grown-padded.tgz); }
bash scripts/tune_shipped.sh "$W/tune-cuda-4160.txt" cuda "$seconds" "--shapes 4160"
bash scripts/logged_run.sh "$W/verify-cuda.txt" 120 python3 -m clgemm verify --device H100 --backend cuda --quick
pack
TURN_TIMEOUT=100 bash scripts/turns.sh "$W/turns" "$turns" \
  "large-cuda=--device H100 --backend cuda --sizes large --c-given"
pack
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
rm -rf "$W"
