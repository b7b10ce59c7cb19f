#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: for BACKEND (cuda or
# opencl), a tune of the tiled kernel alone at 384, 512 and 768 cubed (30 s each, seeded by the
# shipped database) into an empty results folder; the six fastest distinct configurations of
# its 512-cubed journal forced on gemm()'s repeated call in turns beside gemm()'s own choice
# (scripts/tiled_call_ranking.py); `bench --call` over the small set with that tune's database;
# verify's quick sweep of the tiled kernel. Into $OUT/k-slices-BACKEND. With
# CLGEMM_SHIPPED_TUNING=0 nothing seeds the tune: a GPU nothing was tuned for.
#   bash results/h200/k-slices/run.sh BACKEND
set -u
be=$1 W=$OUT/k-slices-$1 T=/tmp/k-slices-$1
mkdir -p "$W"; rm -rf "$T"; mkdir -p "$T"
export PYTHONUNBUFFERED=1 CLGEMM_RESULTS=$T XDG_DATA_HOME=$T/data
head() { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
quiet() { grep -v "CompilerWarning\|_prg.build"; }
run() {  # FILE SECONDS COMMAND...
  local file=$1 seconds=$2; shift 2
  { head; echo "CLGEMM_SHIPPED_TUNING=${CLGEMM_SHIPPED_TUNING:-1} CLGEMM_RESULTS=(this run's tune) $*"
    timeout "$seconds" "$@" 2>&1 | quiet; } \
    > "$W/$file"
}
run tune.txt 230 python3 -m clgemm tune --device NVIDIA --backend "$be" --rungs tiled \
  --shapes 384,512,768 --time 30
journal=$(ls "$T"/journals/*/rung12-512x512x512.jsonl)
run ranking-512.txt 120 python3 scripts/tiled_call_ranking.py NVIDIA "$be" 512x512x512 6 3 \
  "$journal"
run small.txt 120 python3 -m clgemm bench --call --device NVIDIA --backend "$be" --sizes small \
  --c-given --json "$W/small.json"
run verify-tiled.txt 100 python3 -m clgemm verify --device NVIDIA --backend "$be" --rungs tiled \
  --quick
for f in "$T"/*.json; do gzip -c "$f" > "$W/$(basename "$f").gz"; done
(cd "$T" && tar czf "$W/journals.tgz" journals)
