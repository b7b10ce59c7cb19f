#!/usr/bin/env bash
# Helpers for a batch of steps on a GPU machine, sourced after the prelude that installs pyopencl
# and registers NVIDIA's OpenCL ICD:
#   . .whl/prelude.sh && . scripts/gpu_steps.sh && step tune-cl clgemm tune ... && finish
# `step NAME CMD...` runs one clgemm (or any) command with line-buffered output into
# $OUT/logs/NAME.log and a line in $OUT/logs/summary.txt; a failing step is recorded, never fatal.
# `finish` packs results/ (journals, runs), the databases of clgemm/tuning/ and the logs into
# $OUT/results.tgz, so that one file brings back everything however many journals were written,
# and prints the summary.
# $GPU is the short device name for --device (e.g. H200), read from nvidia-smi.
OUT=${OUT:-/tmp/gpu_steps}
mkdir -p "$OUT/logs"
export PYTHONUNBUFFERED=1
GPU=${CLGEMM_GPU:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 \
                    | grep -o -E '[A-Z][0-9]{2,4}[A-Za-z]*' | head -n 1)}
GPU=${GPU:-NVIDIA}
STEPS_FAILED=0

step() {
  local name=$1
  shift
  [ "$1" = clgemm ] && set -- python3 -m clgemm "${@:2}"
  local t0=$SECONDS
  echo "=== $name: $*" | tee -a "$OUT/logs/summary.txt"
  { echo "\$ $*"; echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC')"; } > "$OUT/logs/$name.log"
  stdbuf -oL -eL "$@" >> "$OUT/logs/$name.log" 2>&1
  local rc=$?
  tail -n "${STEP_TAIL:-15}" "$OUT/logs/$name.log"
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$OUT/logs/summary.txt"
  [ "$rc" -eq 0 ] || STEPS_FAILED=1
  return 0
}

finish() {
  tar czf "$OUT/results.tgz" results clgemm/tuning -C "$OUT" logs 2>/dev/null
  cat "$OUT/logs/summary.txt"
  return "$STEPS_FAILED"
}
