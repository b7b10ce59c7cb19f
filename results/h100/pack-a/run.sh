#!/usr/bin/env bash
# The kernel for any size on an A packed just before it against the caller's A read in place, at
# sizes on its vector width (scripts/pack_a_probe.py, ROUNDS rounds, both backends). From the
# repository root after the prelude; into $OUT/pack-a.tgz:
#   bash results/h100/pack-a/run.sh ROUNDS SIZE...
set -u
rounds=$1
shift
W=${OUT:-/tmp}/pack-a
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/probe-$be.txt" 150 python3 scripts/pack_a_probe.py H100 $be "$rounds" "$@"
done
(cd "$(dirname "$W")" && tar czf pack-a.tgz pack-a)
rm -rf "$W"
