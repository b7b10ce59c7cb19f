#!/usr/bin/env bash
# verify's quick sweep on each backend with the database after both small-K steps alone
# (after-*.json.gz here: a plain tune's, the tiled kernel's step at 2048x2048x128 and the
# kernel for any size's at 2000x2000x128). From the repository root after the prelude, into
# $OUT/any-short-k:
#   bash results/h200/any-short-k/verify.sh
set -u
T=/tmp/any-short-k-verify W=${OUT:-/tmp}/any-short-k DEVICE=${DEVICE:-NVIDIA}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
mkdir -p "$W"
for be in opencl cuda; do
  key=$(basename results/h200/plain-tune-combined/$be-*.json.gz .gz)
  rm -rf "$T/$be" && mkdir -p "$T/$be"
  gunzip -c results/h200/any-short-k/after-"$key".gz > "$T/$be/$key"
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ) (CLGEMM_RESULTS=$T/$be CLGEMM_SHIPPED_TUNING=0): python3 -m clgemm verify --device $DEVICE --backend $be --quick"
    CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be XDG_DATA_HOME=$T/data timeout 200 \
      python3 -m clgemm verify --device "$DEVICE" --backend $be --quick 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -n 2 "$W/verify-$be.txt"
done
