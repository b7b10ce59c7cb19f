#!/usr/bin/env bash
# The H200 tuned at 4096 cubed with the tiled kernel's present parameters, and the large
# products measured after. STEPS, in order, into $OUT/large-tune-h200/:
#   tune     on both backends the tiled kernel at 4096 cubed, TUNE_S seconds each (default 90),
#            into the shipped databases (copied to tuning/)
#   padded   through OpenCL the tiled kernel where gemm() runs 4097 cubed and 2500x3500x4500,
#            padded to its tiles and as the kernels see them (4160x4160x4128, 3520x2560x4512),
#            PADDED_S seconds each (default 60)
#   turns:T  `bench --call --c-given` at the large shapes near 4096 cubed, in turns T ("1 2"),
#            into $TURNS (default turns): old is the package of $OLD_COMMIT unpacked into
#            .whl/abold9, new this tree
#   large    `bench --call --sizes large --c-given` on both backends, then against_cublas.py
#   kernel   the tiled kernel alone at 4096 and 8192 cubed on both backends, cuBLAS beside it,
#            then kernel_against_cublas.py
# With FINAL set, large and kernel write into $OUT/large-tune-h200/final/.
# From the repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/large-tune-h200/run.sh "tune turns:1"
set -u
steps=$1
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/large-tune-h200
mkdir -p "$W/tuning"
F=$W${FINAL:+/final}
mkdir -p "$F"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
SHAPES=4096x4096x4096,4097x4097x4097,4096x4096x2048,2500x3500x4500,8192x2048x4096
key() { python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$1').key)"; }
tune() {  # BACKEND SHAPE SECONDS
  local k
  k=$(key "$1")
  bash scripts/logged_run.sh "$W/tune-$1-$2.txt" 300 python3 -m clgemm tune --device "$gpu" \
    --backend "$1" --rungs tiled --shapes "$2" --time "$3" \
    --database "$PWD/clgemm/tuning/$k.json"
  cp "clgemm/tuning/$k.json" "$W/tuning/"
}
for step in $steps; do
  case $step in
    tune) tune opencl 4096 "${TUNE_S:-90}"; tune cuda 4096 "${TUNE_S:-90}" ;;
    padded) tune opencl 4160x4160x4128 "${PADDED_S:-60}"
            tune opencl 3520x2560x4512 "${PADDED_S:-60}" ;;
    turns:*) ln -sfn .whl/abold9 abold
             bash scripts/turns.sh "$W/${TURNS:-turns}" "${step#turns:}" \
               cl="--device $gpu --backend opencl --sizes $SHAPES --c-given" \
               cu="--device $gpu --backend cuda --sizes $SHAPES --c-given" ;;
    large) for be in cuda opencl; do
             bash scripts/logged_run.sh "$F/large-$be.txt" 200 python3 -m clgemm bench --call \
               --device "$gpu" --backend $be --sizes large --c-given --json "$F/large-$be.json"
           done
           python3 scripts/against_cublas.py "$F/large-cuda.json" "$F/large-opencl.json" 2048 \
             > "$F/large-against-cublas.md" 2>&1 ;;
    kernel) for be in cuda opencl; do
              bash scripts/logged_run.sh "$F/kernel-$be.txt" 150 python3 -m clgemm bench \
                --device "$gpu" --backend $be --sizes 4096,8192 --rungs tiled \
                --json "$F/kernel-$be.json"
            done
            python3 scripts/kernel_against_cublas.py "$F/kernel-cuda.json" \
              "$F/kernel-opencl.json" > "$F/kernel-against-cublas.md" 2>&1 ;;
  esac
done
