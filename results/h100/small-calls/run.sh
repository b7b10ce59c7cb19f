#!/usr/bin/env bash
# Small calls on device arrays, C given: `scripts/small_call_probe.py` on both backends at 64-512
# cubed and 64 cubed again last, then `bench --call` over the same sizes largest first. From the
# repository root after the prelude; into $OUT/small-calls.tgz:
#   bash results/h100/small-calls/run.sh
set -u
W=${OUT:-/tmp}/small-calls
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/probe-$be.txt" 120 python3 scripts/small_call_probe.py H100 $be \
    64,128,256,512,64
  bash scripts/logged_run.sh "$W/reversed-$be.txt" 90 python3 -m clgemm bench --call --device H100 \
    --backend $be --sizes 512,256,128,64 --c-given --json "$W/reversed-$be.json"
done
(cd "$(dirname "$W")" && tar czf small-calls.tgz small-calls)
rm -rf "$W"
