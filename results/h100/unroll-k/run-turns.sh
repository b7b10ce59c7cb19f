#!/usr/bin/env bash
# OpenCL's 32x4096x4096 (the kernel's view of the user's 4096x32x4096) tuned again, the seeds'
# variants now measured with them, into the shipped database; then bench --call over SETS
# ("classes", "large", ...) on both backends with the package of $OLD_COMMIT (old, ./abold:
# before UNROLL_K and its tune) and this tree (new) in TURNS. From the repository root after
# the prelude; into $OUT/NAME.tgz:
# With retune-large, CUDA's 2048 and 8192 cubed are tuned again first instead; with
# retune-thin, 32x4096x4096 on both backends (the space keeping what reads B there).
#   bash results/h100/unroll-k/run-turns.sh NAME "TURNS" "SETS" [retune|retune-large|retune-thin]
set -u
name=$1 turns=$2 sets=$3
W=${OUT:-/tmp}/$name
mkdir -p "$W"
if [ "${4:-}" = retune ]; then
  bash scripts/tune_shipped.sh "$W/tune-opencl-32x4096x4096.txt" opencl 45 "--shapes 32x4096x4096 --only PIPELINE=0"
elif [ "${4:-}" = retune-thin ]; then
  for be in opencl cuda; do
    bash scripts/tune_shipped.sh "$W/tune-$be-32x4096x4096.txt" $be 45 "--shapes 32x4096x4096 --only PIPELINE=0"
  done
elif [ "${4:-}" = retune-large ]; then
  for s in 2048x2048x2048 8192x8192x8192; do
    bash scripts/tune_shipped.sh "$W/tune-cuda-$s.txt" cuda 50 "--shapes $s"
  done
fi
specs=()
for s in $sets; do
  specs+=("$s-cuda=--device H100 --backend cuda --sizes $s --c-given"
          "$s-opencl=--device H100 --backend opencl --sizes $s --c-given")
done
TURN_TIMEOUT=150 bash scripts/turns.sh "$W" "$turns" "${specs[@]}"
cd "$(dirname "$W")" && tar czf "$name.tgz" "$name" && rm -rf "$name"
