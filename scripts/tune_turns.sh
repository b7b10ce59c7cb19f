#!/usr/bin/env bash
# One GPU tuned at one shape into the shipped database, then `bench --call` in turns, old the
# package of $OLD_COMMIT unpacked into ./abold (the database before), new this tree with the
# tune. Into DIR (tune-BACKEND-SHAPE.txt, tuning/ with the database after, turns/), packed into
# DIR.tgz; the turns' files are named $STEM-TURN-old|new (default call). From the repository
# root after the prelude, GPU naming the device (default NVIDIA):
#   bash scripts/tune_turns.sh DIR BACKEND SHAPE RUNGS SECONDS "TURNS" "BENCH ARGS"
set -u
dir=$1 be=$2 shape=$3 rungs=$4 seconds=$5 turns=$6 bench=$7
gpu=${GPU:-NVIDIA}
mkdir -p "$dir/tuning"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
k=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$be').key)")
bash scripts/logged_run.sh "$dir/tune-$be-$shape.txt" 300 python3 -m clgemm tune --device "$gpu" \
  --backend "$be" --rungs "$rungs" --shapes "$shape" --time "$seconds" \
  --database "$PWD/clgemm/tuning/$k.json"
cp "clgemm/tuning/$k.json" "$dir/tuning/"
bash scripts/turns.sh "$dir/turns" "$turns" "${STEM:-call}=--device $gpu --backend $be $bench"
(cd "$(dirname "$dir")" && tar czf "$(basename "$dir").tgz" "$(basename "$dir")")
