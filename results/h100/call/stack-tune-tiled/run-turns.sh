#!/usr/bin/env bash
# The stacks of `bench --call --sizes stacks` on both H100 backends, C given, with the package of
# $OLD_COMMIT (old, ./abold: the databases before the stack tune) and this tree (new) in turns;
# then the stack tests on the H100 with each test's time. Into $OUT/stt2.tgz:
#   bash results/h100/call/stack-tune-tiled/run-turns.sh "TURNS"
set -u
W=${OUT:-/tmp}/stt2
mkdir -p "$W"
bash scripts/turns.sh "$W" "$1" \
  stacks-cuda="--device H100 --backend cuda --sizes stacks --c-given" \
  stacks-opencl="--device H100 --backend opencl --sizes stacks --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 240 \
  "-m 'cuda or not cuda' -q -rs --durations=12 tests/test_gemm_stacks.py tests/test_tuner_stacks.py tests/test_verify.py"
cd "$(dirname "$W")" && tar czf stt2.tgz stt2 && rm -rf stt2
