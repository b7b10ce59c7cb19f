#!/usr/bin/env bash
# The tiled kernel's step at 2048x2048x128 beside the plain tune's database: on each backend,
# the database a plain tune stored (../plain-tune-combined/, CLGEMM_SHIPPED_TUNING=0), then the
# same database after one step of the tiled kernel at 2048x2048x128 (17 s, as the plan's other
# small-K step), its space kept to what gemm() runs there. bench --call on the classes, before
# and after, in turns. From the repository root after the prelude, into $OUT/small-k-128:
#   [BACKENDS="opencl cuda"] bash results/h200/small-k-128/run.sh
set -u
T=/tmp/small-k-128 W=${OUT:-/tmp}/small-k-128 DEVICE=${DEVICE:-NVIDIA}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
rm -rf "$T" && mkdir -p "$T" "$W"
head_of() { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
# BACKEND DB FILE SECONDS COMMAND...: with the database folder DB alone
on() {
  local be=$1 db=$2 file=$3 seconds=$4
  shift 4
  { echo "$(head_of) (CLGEMM_RESULTS=$db CLGEMM_SHIPPED_TUNING=0): $*"
    CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$db XDG_DATA_HOME=$T/data timeout "$seconds" "$@" 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"; } > "$file"
  tail -n 1 "$file"
}
classes() {  # BACKEND DB NAME
  on "$1" "$2" "$W/classes-$1-$3.txt" 150 python3 -m clgemm bench --call --device "$DEVICE" \
    --backend "$1" --sizes classes --c-given --json "$W/classes-$1-$3.json"
}
for be in ${BACKENDS:-opencl cuda}; do
  key=$(basename results/h200/plain-tune-combined/"$be"-*.json.gz .gz)
  mkdir -p "$T/$be-before" "$T/$be-after"
  gunzip -c results/h200/plain-tune-combined/"$key".gz > "$T/$be-before/$key"
  cp "$T/$be-before/$key" "$T/$be-after/$key"
  on "$be" "$T/$be-after" "$W/tune-$be.txt" 120 python3 -m clgemm tune --device "$DEVICE" \
    --backend "$be" --rungs tiled --shapes 2048x2048x128 --time 17 -j 16
  cp "$T/$be-after/$key" "$W/after-$key"
  for turn in 1 2; do
    classes "$be" "$T/$be-before" "before-$turn"
    classes "$be" "$T/$be-after" "after-$turn"
  done
done
