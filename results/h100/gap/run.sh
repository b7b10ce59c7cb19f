#!/usr/bin/env bash
# Where the last fifth below the bound goes at 4096 cubed on the H100: the SM clock and power
# each SGEMM sustains (scripts/clock_under_load.py), and Nsight Compute's sections for cuBLAS's
# kernel and the tiled kernel as gemm() runs it. From the repository root after the prelude:
#   bash results/h100/gap/run.sh OUTDIR
set -u
out=$1
mkdir -p "$out"
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); CuPy $(python3 -c 'import cupy; print(cupy.__version__)'), CUDA runtime $(python3 -c 'import cupy; v=cupy.cuda.runtime.runtimeGetVersion(); print(v//1000, v%1000//10, sep=".")'), pyopencl $(python3 -c 'import pyopencl; print(pyopencl.VERSION_TEXT)'); $(date -u +%FT%TZ), at commit ${COMMIT:-?}"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
cmd="python3 scripts/clock_under_load.py H100 4096 8192"
{ echo "$head: $cmd"; timeout 200 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$out/clock-under-load.txt"
cmd="ncu --kernel-name regex:gemm --launch-skip 1 --launch-count 1 $sections python3 scripts/ncu_cublas.py"
{ echo "$head: $cmd"; timeout 150 $cmd 2>&1; } > "$out/ncu-cublas.txt"
cmd="ncu --kernel-name regex:gemm_tiled --launch-skip 1 --launch-count 1 $sections python3 scripts/ncu_large.py"
{ echo "$head: $cmd"; timeout 150 $cmd 2>&1; } > "$out/ncu-tiled.txt"
