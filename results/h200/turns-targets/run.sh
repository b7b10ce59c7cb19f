#!/usr/bin/env bash
# On the GPU machine (two GPUs: OpenCL on the first, the CUDA path on the second, at once),
# after the prelude, from the repository root: `bench --call` (C given, device arrays) over the
# sets the targets of "Every call at the cost of one launch" name (small, classes, stacks, and
# the GPU's default set), with gemm() and each library timed in turns, on the database of the
# plain tune of ../plain-tune-6837b02 with the direct step at 256 cubed of
# ../direct-step-256/step (no shipped database read); with TUNING=shipped, the shipped databases
# alone, into files named SET-BACKEND-shipped. Into $OUT/turns-targets; then
# `python3 scripts/call_targets.py results/h200/turns-targets [shipped]`.
set -u
W=$OUT/turns-targets; T=/tmp/turns-targets; mkdir -p "$W"; rm -rf "$T"
export PYTHONUNBUFFERED=1 CLGEMM_SHIPPED_TUNING=0
TAG=""
[ "${TUNING:-}" = shipped ] && export CLGEMM_SHIPPED_TUNING=1 && TAG=-shipped
declare -A gpu=([opencl]=0 [cuda]=1)
declare -A db=([opencl]=opencl-nvidia-corporation-nvidia-h200-580.159.04
               [cuda]=cuda-nvidia-nvidia-h200-13.0-runtime-13.2)
run_sets() {  # BACKEND
  local be=$1 extra=""
  mkdir -p "$T/$be"
  [ -z "$TAG" ] && zcat "results/h200/direct-step-256/step/${db[$be]}.json.gz" \
    > "$T/$be/${db[$be]}.json"
  [ "$be" = opencl ] && extra="--clblast-params results/h100/clblast-xgemm-tuned.json"
  for set in ${SETS:-small classes stacks default}; do
    local sizes=$set
    [ "$set" = default ] && sizes=""
    { echo "# $(nvidia-smi -i "${gpu[$be]}" --query-gpu=name,driver_version,pci.bus_id \
        --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
      echo "CLGEMM_SHIPPED_TUNING=$CLGEMM_SHIPPED_TUNING CLGEMM_RESULTS=(${TAG:+no database}${TAG:-that database}) python3 -m clgemm bench" \
        "--call --device NVIDIA --backend $be ${sizes:+--sizes $sizes} --c-given $extra"
      CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_RESULTS=$T/$be XDG_DATA_HOME=$T/data-$be \
        timeout 280 python3 -m clgemm bench --call --device NVIDIA --backend "$be" \
        ${sizes:+--sizes $sizes} --c-given $extra --json "$W/$set-$be$TAG.json" 2>&1 \
        | grep -v "CompilerWarning\|_prg.build"
    } > "$W/$set-$be$TAG.txt"
  done
}
for be in opencl cuda; do run_sets $be & done
wait
(cd "$OUT" && tar czf turns-targets.tgz turns-targets && rm -rf turns-targets)
