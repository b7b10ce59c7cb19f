#!/usr/bin/env bash
# `clgemm tune --device all` on a machine with two NVIDIA GPUs of one model, the way a user
# spreads the tuner over every GPU they have: the CUDA path's two devices at once, in one
# process, each with its own measuring and building processes, the tiled kernel at 4096 and at
# 2048 cubed for 30 s each, nothing stored read (CLGEMM_SHIPPED_TUNING=0). The two devices have
# one database and one set of journals, so they share the two steps. Then the journals'
# seconds an evaluation (`scripts/journal_evals.py`). From the repository root after the
# prelude; into $OUT/device-all.tgz:
#   bash results/h100/device-all/run.sh
set -u
W=${OUT:-/tmp}/device-all T=/tmp/device-all
rm -rf "$T" && mkdir -p "$W" "$T"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} XDG_DATA_HOME=$T/data \
  CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/results
log() { bash scripts/logged_run.sh "$@"; }
log "$W/tune-all.txt" 240 python3 -m clgemm tune --device all --backend cuda -j 16 --rungs tiled \
  --shapes 4096,2048 --time 30
tar czf "$W/journals.tgz" -C "$T/results" journals
{ echo "# at commit ${COMMIT:-?}; $(date -u +%FT%TZ): python3 scripts/journal_evals.py journals.tgz"
  python3 scripts/journal_evals.py "$W/journals.tgz"; } > "$W/evals.txt"
(cd "$(dirname "$W")" && tar czf device-all.tgz device-all)
