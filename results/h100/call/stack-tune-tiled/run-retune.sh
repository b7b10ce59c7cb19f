#!/usr/bin/env bash
# The tiled kernel on CUDA tuned again on 100 x 256 cubed and 10 x 1024 cubed, SECONDS each, now
# starting from the stack entries of both backends; then the stacks of both backends in turns
# (scripts/turns.sh; old: the package of $OLD_COMMIT in ./abold, before any stack tune), C
# given. Into $OUT/stt3.tgz:  bash results/h100/call/stack-tune-tiled/run-retune.sh SECONDS "TURNS"
set -u
W=${OUT:-/tmp}/stt3
mkdir -p "$W"
for s in 100x256x256x256 10x1024x1024x1024; do
  bash scripts/tune_shipped.sh "$W/retune-$s-cuda.txt" cuda "$1" "--shapes $s"
done
bash scripts/turns.sh "$W" "$2" \
  stacks-cuda="--device H100 --backend cuda --sizes stacks --c-given" \
  stacks-opencl="--device H100 --backend opencl --sizes stacks --c-given --clblast-params results/h100/clblast-xgemm-tuned.json"
cd "$(dirname "$W")" && tar czf stt3.tgz stt3 && rm -rf stt3
