#!/usr/bin/env bash
# On one H200: the tiled kernel tuned at 8192 cubed through OpenCL, then gemm() and the kernel
# alone with the shipped databases, then the same with the databases of a plain tune alone.
# STEPS, in order, into $OUT/plain-replay-h200/ (packed into $OUT/plain-replay-h200.tgz after
# each step, so that a call cut short keeps what it did):
#   tune8192  through OpenCL the tiled kernel at 8192 cubed, TUNE_S seconds (default 90), into
#             the shipped database (copied to tuning/)
#   shipped   with the shipped databases: `bench --call --sizes large --c-given` and the tiled
#             kernel alone at 4096 and 8192 cubed, both backends, into shipped/
#   replay    the same, and the classes, with no shipped database read and the databases of
#             ../fresh-tune/seventh/small-k/ (the plain tune of 2026-11-28 on an H200, with
#             the 2048x2048x64 step the plan has since) as the only tuning, into replay/
# From the repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/plain-replay-h200/run.sh "tune8192 shipped replay"
set -u
steps=$1
gpu=${GPU:-NVIDIA}
NAME=plain-replay-h200
W=${OUT:-/tmp}/$NAME
HERE=results/h100/$NAME
mkdir -p "$W/tuning" "$W/shipped" "$W/replay"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
pack() { (cd "$(dirname "$W")" && tar czf "$NAME.tgz.part" "$NAME" && mv "$NAME.tgz.part" "$NAME.tgz"); }
key() { python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$1').key)"; }
measure() {  # DIR SETS: gemm()'s call on each set, then the kernel alone, both backends
  local d=$1 sets=$2 be set
  for be in cuda opencl; do
    for set in $sets; do
      bash scripts/logged_run.sh "$d/$set-$be.txt" 200 python3 -m clgemm bench --call \
        --device "$gpu" --backend $be --sizes "$set" --c-given --json "$d/$set-$be.json"
    done
    bash scripts/logged_run.sh "$d/kernel-$be.txt" 150 python3 -m clgemm bench \
      --device "$gpu" --backend $be --sizes 4096,8192 --rungs tiled --json "$d/kernel-$be.json"
  done
  for set in $sets; do
    python3 scripts/against_cublas.py "$d/$set-cuda.json" "$d/$set-opencl.json" \
      > "$d/$set-against-cublas.md" 2>&1
  done
  python3 scripts/kernel_against_cublas.py "$d/kernel-cuda.json" "$d/kernel-opencl.json" \
    > "$d/kernel-against-cublas.md" 2>&1
}
for step in $steps; do
  case $step in
    tune8192) k=$(key opencl)
              bash scripts/logged_run.sh "$W/tune-opencl-8192.txt" 400 python3 -m clgemm tune \
                --device "$gpu" --backend opencl --rungs tiled --shapes 8192 \
                --time "${TUNE_S:-90}" --database "$PWD/clgemm/tuning/$k.json"
              cp "clgemm/tuning/$k.json" "$W/tuning/" ;;
    shipped) measure "$W/shipped" large ;;
    replay) db=/tmp/plain-replay-db
            mkdir -p $db
            for be in cuda opencl; do
              zcat "$HERE/../fresh-tune/seventh/small-k/stepped-$be.json.gz" > "$db/$(key $be).json"
            done
            (export CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$db
             measure "$W/replay" "large classes") ;;
  esac
  pack
done
