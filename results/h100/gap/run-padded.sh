#!/usr/bin/env bash
# The tiled kernel alone at the sizes gemm() pads 2500x3500x4500 and 4097 cubed to (its 64 x 64
# tiles and tile depths: 2560x3520x4512 and 4160x4160x4112 on the CUDA path, 2560x3520x4504 and
# 4160x4160x4104 through OpenCL) beside 4096 cubed, and the tiled kernel for any size at the
# unpadded shapes, on both backends: what the choice's wave count expects of a padded product
# against what it takes. From the repository root after the prelude; into $OUT/padded/:
#   bash results/h100/gap/run-padded.sh
set -u
W=${OUT:-/tmp}/padded
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  k1=4512 k2=4112
  [ $be = opencl ] && k1=4504 k2=4104
  cmd="python3 -m clgemm bench --device H100 --backend $be --sizes 4096,2560x3520x$k1,4160x4160x$k2 --rungs tiled --json $W/tiled-$be.json"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 150 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/tiled-$be.txt"
  cmd="python3 -m clgemm bench --device H100 --backend $be --sizes 2500x3500x4500,4097 --rungs tiled-any --json $W/any-$be.json"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 150 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/any-$be.txt"
done
rm -f "$W"/*.json
