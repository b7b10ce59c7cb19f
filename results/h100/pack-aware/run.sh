#!/usr/bin/env bash
# The choice counting the pack of B against the tiled kernel reading B in one launch, with the
# CUDA path's kernel for any size tuned again at 1000 cubed: verify's quick sweep on both
# backends; shapes whose choice moves, and two it keeps, C given, device arrays, in TURNS with
# the package of $OLD_COMMIT (old, ./abold) and this tree (new); then the call's targets
# (`../targets/run.sh`) with this tree. From the repository root after the prelude; into
# $OUT/pack-aware.tgz, packed again after each step:
#   bash results/h100/pack-aware/run.sh "TURNS" "TARGET STEPS"
set -u
turns=$1 steps=$2
W=${OUT:-/tmp}/pack-aware
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf pack-aware.tgz.part pack-aware && mv pack-aware.tgz.part pack-aware.tgz); }
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 90 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
# the choice alone moves the first four; the database the next twelve; the last two stay
moved=384x2000x64,640x1200x64,64x1024x16000,64x4096x4000
moved=$moved,300x4000x64,999x1536x64,4096x300x64,200x2500x256,800x2048x256,640x2048x500
moved=$moved,2048x1000x500,64x768x1000,1000x1200x1000,1000,500x2048x2000,1500x512x2000
moved=$moved,256x4096x64,512x2048x64
TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$turns" \
  "moved-cuda=--device H100 --backend cuda --sizes $moved --c-given"
pack
if [ -n "$steps" ]; then
  OUT=$W bash results/h100/targets/run.sh "$steps"
  (cd "$W" && tar xzf targets.tgz && rm targets.tgz)
  pack
fi
rm -rf "$W"
