#!/usr/bin/env bash
# On the GPU machine (two GPUs: OpenCL on the first, the CUDA path on the second, at once),
# after the prelude, from the repository root, with the package of the tree before the change
# in .cmp/base: gemm()'s repeated call at 64-512 cubed (`bench --call`, C given, device
# arrays) in turns (ROUNDS, default 3), four ways on each backend:
#   old-tune   the tree before, the database of ../plain-tune-6837b02 as stored
#   new-tune   this tree, that database with the direct step at 256 cubed (step/, gzipped)
#   old-shipped, new-shipped   either tree with the shipped databases alone
# Into $OUT/direct-step-calls.
set -u
W=$OUT/direct-step-calls; T=/tmp/direct-step-calls; mkdir -p "$W"; rm -rf "$T"
export PYTHONUNBUFFERED=1
HERE=results/h200/direct-step-256
declare -A gpu=([opencl]=0 [cuda]=1)
declare -A db=([opencl]=opencl-nvidia-corporation-nvidia-h200-580.159.04
               [cuda]=cuda-nvidia-nvidia-h200-13.0-runtime-13.2)
head_of() { echo "# $(nvidia-smi -i "${gpu[$1]}" --query-gpu=name,driver_version,pci.bus_id \
  --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
for be in opencl cuda; do
  mkdir -p "$T/old-tune-$be" "$T/new-tune-$be" "$T/empty-$be"
  zcat "results/h200/plain-tune-6837b02/${db[$be]}.json.gz" > "$T/old-tune-$be/${db[$be]}.json"
  zcat "$HERE/step/${db[$be]}.json.gz" > "$T/new-tune-$be/${db[$be]}.json"
done
one() {  # BACKEND WAY ROUND
  local be=$1 way=$2 round=$3 tree=$PWD shipped=0 results extra=""
  [ "${way%%-*}" = old ] && tree=$PWD/.cmp/base
  results=$T/${way}-$be
  [ "${way#*-}" = shipped ] && shipped=1 results=$T/empty-$be
  [ "$be" = opencl ] && extra="--clblast-params $PWD/results/h100/clblast-xgemm-tuned.json"
  local f=$W/call-$be-$way-$round
  { head_of "$be"; echo "(in $tree) PYTHONPATH=$tree CLGEMM_SHIPPED_TUNING=$shipped CLGEMM_RESULTS=$results" \
      "python3 -m clgemm bench --call --device NVIDIA --backend $be" \
      "--sizes 64,128,192,256,384,512 --c-given $extra"
    ( cd "$tree" && CUDA_VISIBLE_DEVICES=${gpu[$be]} PYTHONPATH=$tree:${PYTHONPATH:-} \
      CLGEMM_SHIPPED_TUNING=$shipped CLGEMM_RESULTS=$results XDG_DATA_HOME=$T/data-$be \
      timeout 120 python3 -m clgemm bench --call --device NVIDIA --backend "$be" \
      --sizes 64,128,192,256,384,512 --c-given $extra --json "$f.json" 2>&1 \
      | grep -v "CompilerWarning\|_prg.build" )
  } > "$f.txt"
}
for be in opencl cuda; do
  ( for r in $(seq 1 "${ROUNDS:-3}"); do
      for way in old-tune new-tune old-shipped new-shipped; do one $be $way $r; done
    done ) &
done
wait
(cd "$OUT" && tar czf direct-step-calls.tgz direct-step-calls && rm -rf direct-step-calls)
