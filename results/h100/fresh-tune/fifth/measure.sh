#!/usr/bin/env bash
# On the machine that ran `../run.sh start` and `finish` (their $OUT lost to finish's time
# limit): the tunes' databases, logs and journals from /tmp/fresh-tune, then with each tune's
# database alone, on its own GPU and both at once: verify's quick sweep and gemm()'s calls on
# the large products, the classes and the small squares (C given, device arrays), each
# beside cuBLAS or CLBlast. Everything goes into $OUT/fifth.tgz, packed after each part.
#   bash results/h100/fresh-tune/fifth/measure.sh
set -u
T=/tmp/fresh-tune W=${OUT:-/tmp}/fifth
mkdir -p "$W"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
declare -A gpu=([opencl]=0 [cuda]=1)
pack() { (cd "$(dirname "$W")" && tar czf fifth.tgz.part fifth && mv fifth.tgz.part fifth.tgz); }
for be in opencl cuda; do
  cp "$T/tune-$be.txt" "$W/"; cp "$T/$be"/*.json "$W/"
  tar czf "$W/journals-$be.tgz" -C "$T/$be" journals
done
pack
one() {  # BACKEND FILE SECONDS ARGS...: clgemm with the tune's database alone, on its GPU
  local be=$1 file=$2 s=$3; shift 3
  { echo "# $(nvidia-smi -i "${gpu[$be]}" --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ) (fresh tuning): python3 -m clgemm $*"
    CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be \
      XDG_DATA_HOME=$T/data-$be timeout "$s" python3 -m clgemm "$@" 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"; } > "$W/$file"
}
measure() {
  local be=$1 ref=""
  [ "$be" = opencl ] && ref="--clblast-params results/h100/clblast-xgemm-tuned.json"
  one "$be" "verify-$be.txt" 100 verify --device NVIDIA --backend "$be" --quick
  for set in large small classes; do
    one "$be" "$set-$be-fresh.txt" 110 bench --call --device NVIDIA --backend "$be" --sizes $set \
      --c-given $ref --json "$W/$set-$be-fresh.json"
  done
}
for be in opencl cuda; do measure "$be" & done
while jobs -r | grep -q .; do sleep 20; pack; done
pack
