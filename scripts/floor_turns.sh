#!/usr/bin/env bash
# scripts/floor_parts.py at SIZE cubed on both backends in turns, one process each, old the
# package in ./abold ($OLD_COMMIT) and new this tree, each line headed by its side, the whole
# headed by the GPU, $COMMIT and the loop; into FILE (`scripts/floor_turns_table.py` reads it).
# From the repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash scripts/floor_turns.sh FILE "TURNS" SIZE
set -u
file=$1 turns=$2 size=$3
gpu=${GPU:-NVIDIA}
root=$PWD
{ echo "# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?} (old: the package of ${OLD_COMMIT:-?}); $(date -u +%FT%TZ): for turn in $turns; do for v in old new; do for be in cuda opencl; do python3 scripts/floor_parts.py $gpu \$be $size; done; done; done"
  for turn in $turns; do for v in old new; do for be in cuda opencl; do
    dir=$root; [ $v = old ] && dir=$root/abold
    printf '%s ' "$v"
    (cd scripts && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 60 python3 floor_parts.py "$gpu" $be \
       "$size" 2>&1 | grep -v "CompilerWarning\|_prg.build")
  done; done; done; } > "$file"
