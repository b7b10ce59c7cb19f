#!/usr/bin/env bash
# Two changes to the lookup's reckoning, with the shipped databases, on one GPU, one backend at
# a time: the padded tiled kernel's estimate counting its launches (the pass over A and the
# epilogue), and the tiled kernel's split of K into any count of slices that divides K's
# tiles. First verify's quick sweep on both backends; then the shapes of
# results/h100/shape-map whose choice (kernel, configuration or slices) either change moves
# (`scripts/choice_moves.py --list`), as gemm() is called with them (C-ordered), C given,
# device arrays, in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new);
# then the library path's GPU tests that run the slices and the padded products. From the
# repository root after the prelude; into $OUT/launch-split.tgz:
#   bash results/h100/launch-split/run.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/launch-split
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=${GPU:-0}
DEVICE=${DEVICE:-NVIDIA}
export HEAD="# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
pack() { (cd "$(dirname "$W")" && tar czf launch-split.tgz.part launch-split && mv launch-split.tgz.part launch-split.tgz); }
declare -A moved=(
  [cuda]=64x128x16000,200x512x500,256x384x4000,384x128x16000,1100x500x2000,1200x384x256,1500x200x256,3000x2048x64,4096x64x500,4096x100x500
  [opencl]=64x128x16000,200x512x500,256x384x4000,300x100x256,300x256x500,384x128x16000,640x200x64,640x1200x500,1024x512x1000,1200x512x64,1500x200x256,1500x900x256,2048x256x16000,4096x100x500,16x4096x4096)
for be in opencl cuda; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 120 python3 -m clgemm verify --device "$DEVICE" --backend "$be" --quick
done
pack
for be in opencl cuda; do
  TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$turns" \
    "moved-$be=--device $DEVICE --backend $be --sizes ${moved[$be]} --c-given"
  pack
done
for be in opencl cuda; do
  bash scripts/logged_run.sh "$W/tests-$be.txt" "${TESTS_S:-90}" env CLGEMM_TEST_DEVICE="$DEVICE" \
    CLGEMM_TEST_BACKEND=$be python3 -m pytest -m "cuda or not cuda" -q -x -rs \
    -k "split or pad or panel or repeat or scratch" tests/test_gemm_api.py \
    tests/test_gemm_repeated.py tests/test_rungs_upper.py
done
pack
rm -rf "$W"
