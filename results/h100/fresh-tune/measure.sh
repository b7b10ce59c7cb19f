#!/usr/bin/env bash
# On the machine that ran `run.sh start` (its tunes finished or stopped): the tunes' databases,
# logs and journals from /tmp/fresh-tune, then with each tune's database alone, on its own GPU
# and both at once: verify's quick sweep, gemm()'s calls on the classes, the large products and
# the small squares (C given, device arrays) beside cuBLAS or CLBlast, and the tiled kernel
# alone at 4096 cubed beside the vendor's. A tune still running TUNE_WAIT s in is stopped. Everything
# goes into $OUT/NAME.tgz, packed after each part, so that a call cut short keeps what it did.
#   bash results/h100/fresh-tune/measure.sh NAME
# (`fifth/` ran an earlier form, as `fifth/measure.sh`, without the tiled kernel's bench.)
set -u
NAME=$1
T=/tmp/fresh-tune W=${OUT:-/tmp}/$NAME
mkdir -p "$W"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
BACKENDS=${BACKENDS:-opencl cuda}
declare -A gpu=([opencl]=${OPENCL_GPU:-0} [cuda]=${CUDA_GPU:-1})
pack() { (cd "$(dirname "$W")" && tar czf "$NAME.tgz.part" "$NAME" && mv "$NAME.tgz.part" "$NAME.tgz"); }
# the tunes get up to TUNE_WAIT s (120) more to finish; one still running then is stopped
for _ in $(seq $(( ${TUNE_WAIT:-120} / 5 ))); do pgrep -f "clgemm tune" >/dev/null || break; sleep 5; done
pkill -INT -f "clgemm tune" && sleep 10
for be in $BACKENDS; do
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
  for set in classes large small; do
    one "$be" "$set-$be-fresh.txt" 110 bench --call --device NVIDIA --backend "$be" --sizes $set \
      --c-given $ref --json "$W/$set-$be-fresh.json"
  done
  one "$be" "kernel-$be.txt" 90 bench --device NVIDIA --backend "$be" --sizes 4096 \
    --rungs tiled --json "$W/kernel-$be.json"
}
for be in $BACKENDS; do measure "$be" & done
while jobs -r | grep -q .; do sleep 20; pack; done
pack
