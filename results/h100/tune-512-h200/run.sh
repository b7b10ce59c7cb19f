#!/usr/bin/env bash
# The H200's CUDA path tuned at 512 cubed, where its call waits on the kernel: the tiled and
# direct kernels, TUNE_S seconds each (default 45), into the shipped database (copied to
# tuning/); then `bench --call --c-given` on the CUDA path around 512 cubed in turns TURNS,
# old the package of $OLD_COMMIT unpacked into .whl/abold12 (the database before), new this
# tree with the tune. Into $OUT/tune-512-h200/ (packed into $OUT/tune-512-h200.tgz). From the
# repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/tune-512-h200/run.sh "1 2"
set -u
turns=$1
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/tune-512-h200
mkdir -p "$W/tuning"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
k=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='cuda').key)")
bash scripts/logged_run.sh "$W/tune-cuda-512.txt" 300 python3 -m clgemm tune --device "$gpu" \
  --backend cuda --rungs tiled,direct --shapes 512 --time "${TUNE_S:-45}" \
  --database "$PWD/clgemm/tuning/$k.json"
cp "clgemm/tuning/$k.json" "$W/tuning/"
ln -sfn .whl/abold12 abold
bash scripts/turns.sh "$W/turns" "$turns" \
  cu="--device $gpu --backend cuda --sizes 384,448,512,640,768 --c-given"
(cd "$(dirname "$W")" && tar czf tune-512-h200.tgz tune-512-h200)
