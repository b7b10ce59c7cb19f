#!/usr/bin/env bash
# A stack of a thousand 64-cubed products on the H200, and what a process's floor per call is
# made of. STEPS, in order, into $OUT/stack-tune-h200/:
#   floor   scripts/floor_parts.py at 256 cubed, six processes a backend, in turns
#   before  `bench --call --sizes stacks --c-given` on both backends, the shipped databases
#   tune    the direct and tiled kernels tuned for TUNE_S seconds each (default 40) on the stack
#           1000x64x64x64, both backends, into the shipped databases (copied to tuning/)
#   after   the stacks' bench again
# From the repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/stack-tune-h200/run.sh "floor before tune after"
set -u
steps=$1
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/stack-tune-h200
mkdir -p "$W/tuning"
export XDG_DATA_HOME=/tmp/clgemm-data CLGEMM_RESULTS=/tmp/clgemm-journals PYTHONUNBUFFERED=1 \
  CUDA_VISIBLE_DEVICES=0
key() { python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$1').key)"; }
bench() {
  local extra=""
  [ "$2" = opencl ] && extra="--clblast-params results/h100/clblast-xgemm-tuned.json"
  bash scripts/logged_run.sh "$W/$1-$2.txt" 120 python3 -m clgemm bench --call --device "$gpu" \
    --backend "$2" --sizes stacks --c-given $extra --json "$W/$1-$2.json"
}
for step in $steps; do
  case $step in
    floor)
      { echo "# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ): for i in 1 2 3 4 5 6; do for be in cuda opencl; do python3 scripts/floor_parts.py $gpu \$be 256; done; done"
        for i in 1 2 3 4 5 6; do for be in cuda opencl; do
          (cd scripts && timeout 60 python3 floor_parts.py "$gpu" $be 256 2>&1 \
             | grep -v "CompilerWarning\|_prg.build")
        done; done; } > "$W/floor.txt"
      cat "$W/floor.txt" ;;
    before|after) bench "$step" cuda; bench "$step" opencl ;;
    tune)
      for be in cuda opencl; do
        k=$(key $be)
        bash scripts/logged_run.sh "$W/tune-$be.txt" 200 python3 -m clgemm tune --device "$gpu" \
          --backend $be --rungs direct,tiled --shapes 1000x64x64x64 --time "${TUNE_S:-40}" \
          --database "$PWD/clgemm/tuning/$k.json"
        cp "clgemm/tuning/$k.json" "$W/tuning/"
      done ;;
  esac
done
