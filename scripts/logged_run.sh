#!/usr/bin/env bash
# COMMAND under a limit of SECONDS into FILE, headed by the GPU (nvidia-smi), $COMMIT, the date
# and the command, the compilers' warnings left out; its last line printed. From the
# repository root on the GPU machine after the prelude:
#   bash scripts/logged_run.sh FILE SECONDS COMMAND [ARGS...]
set -u
file=$1 seconds=$2
shift 2
# the GPU the command sees: the first of CUDA_VISIBLE_DEVICES where it is set, else every one
only=${CUDA_VISIBLE_DEVICES:+-i ${CUDA_VISIBLE_DEVICES%%,*}}
head="# $(nvidia-smi $only --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | paste -sd ';' -); at commit ${COMMIT:-?}"
{ echo "$head; $(date -u +%FT%TZ): $*"
  timeout "$seconds" "$@" 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$file"
tail -n 1 "$file"
