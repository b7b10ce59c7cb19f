#!/usr/bin/env bash
# The tiled kernel's configuration stored at 4096 cubed on the CUDA path, kernel only, with A's
# values read as float2 (as stored), float4 and float8 from local memory, on both backends at
# 4096 and 8192 cubed, each in two turns: fewer local loads per step (8, 6, 6 by the model's
# count), the one difference Nsight Compute found in the instruction stream against cuBLAS.
# From the repository root after the prelude:
#   bash results/h100/gap/run-vectors.sh OUTDIR ["TURNS"] ["WIDTHS"]
set -u
out=$1 turns=${2:-1 2} widths=${3:-2 4 8}
mkdir -p "$out"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
base="-p tiled:TSM=64 -p tiled:TSN=64 -p tiled:TSK=8 -p tiled:WPTM=8 -p tiled:WPTN=16 -p tiled:WIDTH=4 -p tiled:VWN=8 -p tiled:PIPELINE=2 -p tiled:UNROLL_K=1"
for turn in $turns; do
  for size in 4096 8192; do
    for be in cuda opencl; do
      for vwm in $widths; do
        name=vwm$vwm-$be-$size-$turn
        cmd="python3 -m clgemm ladder --device H100 --backend $be --size $size --rungs tiled --defaults $base -p tiled:VWM=$vwm --repeats 20 --json $out/$name.json"
        { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 60 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$out/$name.txt"
        echo "$name $(python3 -c "import json,sys; r=json.load(open('$out/$name.json'))['rows'][0]; print(round(r['gflops'] or 0), r['status'])" 2>&1 | tail -1)"
      done
    done
  done
done
