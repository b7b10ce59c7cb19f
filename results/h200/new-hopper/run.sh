#!/usr/bin/env bash
# The H200 as a Hopper the shipped databases do not know: its own shipped databases (both
# backends) removed from this copy of the package, so that what the lookup knows comes from its
# family (the H100's entries) and its type. On each backend, the plain tune's step for the
# tiled kernel at 4096 cubed (`tune --rungs tiled --shapes 4096` without --time: the plan's
# seconds, seeded as the plain tune seeds it), into a database of its own; then the tiled
# kernel alone at 4096 and 8192 cubed against cuBLAS (TF32 off) with that database.
# Into $OUT/new-hopper/ (packed into $OUT/new-hopper.tgz). From the repository root after the
# prelude, GPU naming the device (default H200):
#   bash results/h200/new-hopper/run.sh
set -u
gpu=${GPU:-H200}
NAME=new-hopper
W=${OUT:-/tmp}/$NAME
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/$NAME-data CLGEMM_RESULTS=/tmp/$NAME-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
rm -rf "$XDG_DATA_HOME" "$CLGEMM_RESULTS"
rm -f clgemm/tuning/*nvidia-h200*.json
ls clgemm/tuning > "$W/shipped-left.txt"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/tune-$be.txt" 200 python3 -m clgemm tune --device "$gpu" \
    --backend $be --rungs tiled --shapes 4096
  bash scripts/logged_run.sh "$W/kernel-$be.txt" 150 python3 -m clgemm bench \
    --device "$gpu" --backend $be --sizes 4096,8192 --rungs tiled --json "$W/kernel-$be.json"
done
python3 scripts/kernel_against_cublas.py "$W/kernel-cuda.json" "$W/kernel-opencl.json" \
  > "$W/kernel-against-cublas.md" 2>&1
cp -r "$XDG_DATA_HOME" "$W/data"
tar czf "$W/journals.tgz" -C "$CLGEMM_RESULTS" .
(cd "$(dirname "$W")" && tar czf $NAME.tgz $NAME)
cat "$W/kernel-against-cublas.md"
