#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: each tune of TUNES
# ("FILE:BACKEND:SECONDS:SHAPE ...", scripts/tune_shipped.sh into DIR/FILE.txt), then each
# STEM="BENCH ARGS" of bench --call in TURNS with the package of $OLD_COMMIT (old, ./abold) and
# this tree (new) (scripts/turns.sh), all packed into $OUT/NAME.tgz:
#   bash scripts/gpu_tune_turns.sh NAME "TURNS" "TUNES" STEM="BENCH ARGS" ...
set -u
name=$1 turns=$2 tunes=$3
shift 3
W=${OUT:-/tmp}/$name
mkdir -p "$W"
for t in $tunes; do
  IFS=: read -r file backend seconds shape <<< "$t"
  bash scripts/tune_shipped.sh "$W/$file.txt" "$backend" "$seconds" "--shapes $shape"
done
[ $# -gt 0 ] && bash scripts/turns.sh "$W" "$turns" "$@"
cd "$(dirname "$W")" && tar czf "$name.tgz" "$(basename "$W")" && rm -rf "$W"
