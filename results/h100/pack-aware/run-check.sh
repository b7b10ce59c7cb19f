#!/usr/bin/env bash
# After the choice counting the pack of B and the CUDA path's retuned entry: the library's call
# tests with the H100 and the Xeon as the test device; the shapes whose choice the lookup's grid
# moves back to the tiled kernel taken as gemm() is called with them, and a short-K shape both
# ways round, C given, device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold)
# and this tree (new); then gemm() on NumPy arrays on the Xeon against its kernel and NumPy (its
# family's tuning: the 2-core Xeon's database), a new C and a given one. From the repository
# root after the prelude; into $OUT/pack-aware-check.tgz, packed again after each step:
#   bash results/h100/pack-aware/run-check.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/pack-aware-check
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf pack-aware-check.tgz.part pack-aware-check && mv pack-aware-check.tgz.part pack-aware-check.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
sizes=1024x64x16000,4096x64x4000,640x1200x64,1200x640x64
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "back-cuda=--device H100 --backend cuda --sizes $sizes --c-given"
pack
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 120 "-q -p no:cacheprovider $calls"
pack
for c in new given; do
  flag=""; [ $c = given ] && flag="--c-given"
  bash scripts/logged_run.sh "$W/xeon-call-$c.txt" 90 python3 -m clgemm bench --call --device xeon \
    --arrays numpy --sizes 1024,2048,4096 $flag --json "$W/xeon-call-$c.json"
done
pack
rm -rf "$W"
