#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: at 512 cubed, the tiled
# kernel's fastest configurations by the tunes' measurements, forced on gemm()'s repeated call
# in turns (scripts/tiled_call_ranking.py), on each backend, from the journals of the plain tune
# of ../plain-tune-6837b02 and of the 60 s search of ../tiles-512. Into $OUT/call-ranking-512.
#   bash results/h200/call-ranking-512/run.sh TOP ROUNDS
set -u
top=${1:-10} rounds=${2:-3}
W=$OUT/call-ranking-512; J=/tmp/ranking-journals; mkdir -p "$W" "$J"
for be in cuda opencl; do
  tar xzf results/h200/plain-tune-6837b02/journals-$be.tgz -C "$J"
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ); shipped databases"
    timeout 280 python3 scripts/tiled_call_ranking.py H200 $be 512x512x512 "$top" "$rounds" \
      "$J"/journals-$be/*/rung12-512x512x512.jsonl results/h200/tiles-512/journal-$be.jsonl.gz 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"
  } > "$W/ranking-$be.txt"
done
(cd "$OUT" && tar czf call-ranking-512.tgz call-ranking-512 && rm -rf call-ranking-512)
