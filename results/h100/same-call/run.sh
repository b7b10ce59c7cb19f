#!/usr/bin/env bash
# A call repeated on the same arrays without its key, on one loan: the call tests on both
# backends of the GPU and on the host's CPU; then in turns scripts/floor_parts.py at SIZE
# (default 256) cubed, the package of $OLD_COMMIT in ./abold (old) against this tree (new), one
# process each; then `bench --call --sizes small --c-given` on both backends with this tree.
# Into $OUT/same-call/ (packed into $OUT/same-call.tgz). From the repository root after the
# prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/same-call/run.sh "1 2 3 4 5 6"
set -u
turns=$1 size=${SIZE:-256}
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/same-call
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
tests="tests/test_gemm_same_call.py tests/test_gemm_repeated.py tests/test_gemm_overlap.py"
tests="$tests tests/test_gemm_queues.py"
bash scripts/every_device_tests.sh "$W" "$gpu" 200 "-q -p no:cacheprovider $tests"
bash scripts/floor_turns.sh "$W/floor-turns.txt" "$turns" "$size"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/small-$be.txt" 90 python3 -m clgemm bench --call --device "$gpu" \
    --backend $be --sizes small --c-given --json "$W/small-$be.json"
done
(cd "$(dirname "$W")" && tar czf same-call.tgz same-call)
cat "$W/floor-turns.txt"
