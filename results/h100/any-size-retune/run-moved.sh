#!/usr/bin/env bash
# With the kernel for any size's 1000-cubed entries tuned again (in this tree's databases), some
# shapes whose lookup moves from the tiled kernel to it, and 1000 cubed, C given, device arrays,
# in TURNS with the package of $OLD_COMMIT (old, ./abold, the databases as shipped) and this tree
# (new); then the call's targets (`../targets/run.sh`) with this tree. From the repository root
# after the prelude; into $OUT/any-size-moved.tgz:
#   bash results/h100/any-size-retune/run-moved.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/any-size-moved
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf any-size-moved.tgz.part any-size-moved && mv any-size-moved.tgz.part any-size-moved.tgz); }
cuda=1000,1000x100x1000,64x1024x1000,256x512x1000,2048x1000x256,2500x900x1000,700x1200x2000,640x2048x500,2500x1024x1000
opencl=1000,1000x100x1000,500x128x1000,700x1200x1000,2500x1200x64,64x640x1000,900x768x500,800x2048x256
TURN_TIMEOUT=60 bash scripts/turns.sh "$W/turns" "$turns" \
  "moved-cuda=--device H100 --backend cuda --sizes $cuda --c-given" \
  "moved-opencl=--device H100 --backend opencl --sizes $opencl --c-given"
pack
OUT=$W bash results/h100/targets/run.sh "small stacks classes default"
(cd "$W" && tar xzf targets.tgz && rm targets.tgz)
pack
rm -rf "$W"
