#!/usr/bin/env bash
# The lookup counting the share of a tile's work a product keeps (`configs.lookup.useful_share`),
# with the shipped databases: verify's quick sweep on both backends; then shapes the lookup's
# grid moves (`scripts/choice_moves.py --list`), as gemm() is called with them (C-ordered), C
# given, device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree
# (new); then the library path's GPU tests. On a two-GPU machine the OpenCL turns run on the
# first GPU and the CUDA path's on the second, at once. From the repository root after the
# prelude; into $OUT/overhang.tgz:
#   bash results/h100/overhang/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/overhang
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
DEVICE=${DEVICE:-NVIDIA}
gpus=$(nvidia-smi -L | wc -l)
declare -A gpu=([opencl]=0 [cuda]=$((gpus > 1 ? 1 : 0)))
pack() { (cd "$(dirname "$W")" && tar czf overhang.tgz.part overhang && mv overhang.tgz.part overhang.tgz); }
declare -A moved=(
  [cuda]=100x4000x64,900x200x256,512x1536x64,1536x1024x256,384x4096x500,640x1500x4000,500x900x2000,300x4000x16000,640x300x16000,4000x256x16000
  [opencl]=700x2000x64,2500x4096x64,1024x2500x64,1000x3000x64,1200x512x64,768x256x2000,128x1536x2000,256x256x1000,1200x768x4000,500x100x500,200x3000x64,1100x1500x256,2000x900x16000,1200x100x16000,2000x512x16000)
one() {  # one backend's steps on its own GPU
  local be=$1
  export CUDA_VISIBLE_DEVICES=${gpu[$be]}
  export HEAD="# $(nvidia-smi -i "${gpu[$be]}" --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
  bash scripts/logged_run.sh "$W/verify-$be.txt" 120 python3 -m clgemm verify --device "$DEVICE" --backend "$be" --quick
  TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$turns" \
    "moved-$be=--device $DEVICE --backend $be --sizes ${moved[$be]} --c-given"
}
for be in opencl cuda; do one $be > "$W/progress-$be.txt" 2>&1 & done
wait
pack
CUDA_VISIBLE_DEVICES=0 OUT=/tmp/overhang-tests timeout "${TESTS_S:-200}" bash scripts/gpu_call_bench.sh \
  tests > "$W/progress-tests.txt" 2>&1
{ echo "${HEAD:-# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}}; $(date -u +%FT%TZ): bash scripts/gpu_call_bench.sh tests"
  cat /tmp/overhang-tests/tests.log; } > "$W/tests.txt" 2>/dev/null
pack
rm -rf "$W"
