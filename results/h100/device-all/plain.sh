#!/usr/bin/env bash
# The plain `clgemm tune --device all` on a machine with two NVIDIA GPUs of one model: the whole
# plan (no --budget, --time or shapes), nothing stored read (CLGEMM_SHIPPED_TUNING=0), the
# steps shared between the two devices (one database, one set of journals). Then, with that
# database alone on one of the GPUs: verify's quick sweep and gemm()'s calls on the classes (C
# given, device arrays) beside the vendor's. BACKEND (opencl) picks the devices. From the
# repository root after the prelude; into $OUT/plain-all.tgz, packed after each part:
#   BACKEND=opencl bash results/h100/device-all/plain.sh
set -u
BE=${BACKEND:-opencl}
W=${OUT:-/tmp}/plain-all T=/tmp/plain-all
rm -rf "$T" && mkdir -p "$W" "$T"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} XDG_DATA_HOME=$T/data \
  CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/results
log() { bash scripts/logged_run.sh "$@"; }
pack() { (cd "$(dirname "$W")" && tar czf plain-all.tgz plain-all); }
log "$W/tune-all.txt" 420 python3 -m clgemm tune --device all --backend "$BE" -j 16
tar czf "$W/journals.tgz" -C "$T/results" journals
gzip -n -c "$T/results"/*.json > "$W/database-$BE.json.gz"
{ echo "# at commit ${COMMIT:-?}; $(date -u +%FT%TZ): python3 scripts/journal_evals.py journals.tgz"
  python3 scripts/journal_evals.py "$W/journals.tgz"; } > "$W/evals.txt"
pack
export CUDA_VISIBLE_DEVICES=0
log "$W/verify-$BE.txt" 100 python3 -m clgemm verify --device NVIDIA --backend "$BE" --quick
ref=""
[ "$BE" = opencl ] && ref="--clblast-params results/h100/clblast-xgemm-tuned.json"
log "$W/classes-$BE.txt" 120 python3 -m clgemm bench --call --device NVIDIA --backend "$BE" \
  --sizes classes --c-given $ref --json "$W/classes-$BE.json"
pack
