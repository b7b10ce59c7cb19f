#!/usr/bin/env bash
# The H200's two weakest shapes against cuBLAS tuned on it, and the sets they belong to measured
# after. STEPS, in order, into $OUT/classes-tune-h200/:
#   tune     through OpenCL the tiled and skinny kernels at 4096x32x4096 (the product 32 x 4096
#            x 4096 into a C-ordered C, as the kernels see it); on both backends the tiled
#            kernel at 2048 cubed; TUNE_S seconds each (default 45), into the shipped databases
#            (copied to tuning/)
#   classes  `bench --call --sizes classes --c-given` through OpenCL, CLBlast tuned beside it
#   large    `bench --call --sizes large --c-given` on both backends, then against_cublas.py
# From the repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/classes-tune-h200/run.sh "tune classes"
set -u
steps=$1
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/classes-tune-h200
mkdir -p "$W/tuning"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
key() { python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$1').key)"; }
tune() {  # NAME BACKEND RUNGS SHAPES
  local k
  k=$(key "$2")
  bash scripts/logged_run.sh "$W/tune-$1.txt" 200 python3 -m clgemm tune --device "$gpu" \
    --backend "$2" --rungs "$3" --shapes "$4" --time "${TUNE_S:-45}" \
    --database "$PWD/clgemm/tuning/$k.json"
  cp "clgemm/tuning/$k.json" "$W/tuning/"
}
for step in $steps; do
  case $step in
    tune) tune opencl-skinny-class opencl tiled,skinny 4096x32x4096
          tune opencl-2048 opencl tiled 2048
          tune cuda-2048 cuda tiled 2048 ;;
    classes) bash scripts/logged_run.sh "$W/classes-opencl.txt" 200 python3 -m clgemm bench \
               --call --device "$gpu" --backend opencl --sizes classes --c-given \
               --clblast-params results/h100/clblast-xgemm-tuned.json \
               --json "$W/classes-opencl.json" ;;
    large) for be in cuda opencl; do
             bash scripts/logged_run.sh "$W/large-$be.txt" 200 python3 -m clgemm bench --call \
               --device "$gpu" --backend $be --sizes large --c-given --json "$W/large-$be.json"
           done
           python3 scripts/against_cublas.py "$W/large-cuda.json" "$W/large-opencl.json" 2048 \
             > "$W/large-against-cublas.md" 2>&1 ;;
  esac
done
