#!/usr/bin/env bash
# `clgemm tune --device all` on a machine with two NVIDIA GPUs, the way a user spreads the tuner
# over every GPU they have: the CUDA path's two devices at once, in one process, each with its
# own measuring and building processes, the tiled kernel at 4096 cubed for 30 s each, nothing
# stored read (CLGEMM_SHIPPED_TUNING=0). Then the journals' seconds an evaluation
# (`scripts/journal_evals.py`), and the time a plain tune's plan takes to prepare before it
# measures anything (`--dry-run`, its pruning funnels). From the repository root after the
# prelude; into $OUT/device-all.tgz:
#   bash results/h100/device-all/run.sh
set -u
W=${OUT:-/tmp}/device-all T=/tmp/device-all
rm -rf "$T" && mkdir -p "$W" "$T"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} XDG_DATA_HOME=$T/data \
  CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/results
log() { bash scripts/logged_run.sh "$@"; }
log "$W/tune-all.txt" 240 python3 -m clgemm tune --device all --backend cuda -j 16 --rungs tiled \
  --size 4096 --time 30
tar czf "$W/journals.tgz" -C "$T/results" journals
{ echo "# at commit ${COMMIT:-?}; $(date -u +%FT%TZ): python3 scripts/journal_evals.py journals.tgz"
  python3 scripts/journal_evals.py "$W/journals.tgz"; } > "$W/evals.txt"
{ echo "# $(nproc) cores; at commit ${COMMIT:-?}; $(date -u +%FT%TZ): time python3 -m clgemm tune --device NVIDIA --backend opencl --dry-run"
  start=$(date +%s.%N)
  timeout 200 python3 -m clgemm tune --device NVIDIA --backend opencl --dry-run > "$T/dry.txt" 2>&1
  echo "exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
  grep -c "pruning funnel" "$T/dry.txt" | sed 's/$/ funnels/'; } > "$W/dry-run.txt"
(cd "$(dirname "$W")" && tar czf device-all.tgz device-all)
