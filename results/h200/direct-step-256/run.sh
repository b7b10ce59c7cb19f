#!/usr/bin/env bash
# On the GPU machine (two GPUs: OpenCL on the first, the CUDA path on the second, at once),
# after the prelude, from the repository root: the plain tune's direct step at 256 cubed in
# place of 128 cubed, on the databases of ../plain-tune-6837b02. `old` is that run's database
# as stored; `new` the same without its direct entry of 128 cubed and with the direct kernel
# tuned at 256 cubed for the step's 10 s (`clgemm tune --rungs direct --shapes 256 --time 10`).
# Then gemm()'s repeated call at 64-512 cubed with each, in turns (ROUNDS, default 3), with no
# shipped database read: `bench --call` beside cuBLAS or CLBlast. Into $OUT/direct-step-256.
set -u
W=$OUT/direct-step-256; T=/tmp/direct-step; mkdir -p "$W"; rm -rf "$T"
export PYTHONUNBUFFERED=1 CLGEMM_SHIPPED_TUNING=0
SRC=results/h200/plain-tune-6837b02
declare -A gpu=([opencl]=0 [cuda]=1)
declare -A db=([opencl]=opencl-nvidia-corporation-nvidia-h200-580.159.04
               [cuda]=cuda-nvidia-nvidia-h200-13.0-runtime-13.2)
head_of() { echo "# $(nvidia-smi -i "${gpu[$1]}" --query-gpu=name,driver_version,pci.bus_id \
  --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
quiet() { grep -v "CompilerWarning\|_prg.build"; }
prepare() {  # BACKEND: old and new results folders, the direct step at 256 cubed into new
  local be=$1
  mkdir -p "$T/old-$be" "$T/new-$be"
  zcat "$SRC/${db[$be]}.json.gz" > "$T/old-$be/${db[$be]}.json"
  python3 - "$T/old-$be/${db[$be]}.json" "$T/new-$be/${db[$be]}.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["entries"] = [e for e in d["entries"] if not (e["rung"] == 11 and e["shape"] == [128] * 3)]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
  { head_of "$be"; echo "CLGEMM_RESULTS=$T/new-$be python3 -m clgemm tune --device NVIDIA" \
      "--backend $be --rungs direct --shapes 256 --time 10 -j 16"
    CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_RESULTS=$T/new-$be XDG_DATA_HOME=$T/data-$be \
      timeout 150 python3 -m clgemm tune --device NVIDIA --backend "$be" --rungs direct \
      --shapes 256 --time 10 -j 16 2>&1 | quiet; } > "$W/tune-$be.txt"
}
calls() {  # BACKEND ROUND: bench --call with each tree's database, in turns
  local be=$1 round=$2 extra=""
  [ "$be" = opencl ] && extra="--clblast-params results/h100/clblast-xgemm-tuned.json"
  for tree in old new; do
    local f=$W/call-$be-$tree-$round
    { head_of "$be"; echo "CLGEMM_RESULTS=$T/$tree-$be python3 -m clgemm bench --call" \
        "--device NVIDIA --backend $be --sizes 64,128,192,256,384,512 --c-given $extra"
      CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_RESULTS=$T/$tree-$be XDG_DATA_HOME=$T/data-$be \
        timeout 120 python3 -m clgemm bench --call --device NVIDIA --backend "$be" \
        --sizes 64,128,192,256,384,512 --c-given $extra --json "$f.json" 2>&1 | quiet
    } > "$f.txt"
  done
}
for be in opencl cuda; do
  ( prepare $be; for r in $(seq 1 "${ROUNDS:-3}"); do calls $be $r; done ) &
done
wait
cp "$T"/new-*/*.json "$W/" 2>/dev/null
(cd "$OUT" && tar czf direct-step-256.tgz direct-step-256 && rm -rf direct-step-256)
