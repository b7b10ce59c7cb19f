#!/usr/bin/env bash
# The tiled kernel under Nsight Compute again, as gemm() runs it at 4096 and 8192 cubed on the
# CUDA path after the tunes of results/h100/grown-block (128 x 128 tiles, 16 x 8 sums per
# work-item), with the sections and metrics of run.sh. From the repository root after the
# prelude; into $OUT/ncu-tiled-SIZE-after.txt:
#   bash results/h100/gap-account/run-after.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); CuPy $(python3 -c 'import cupy; print(cupy.__version__)'); $(ncu --version | tail -1); at commit ${COMMIT:-?}"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis"
metrics="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_global_ld.sum"
for size in 4096 8192; do
  cmd="ncu --kernel-name regex:gemm_tiled --launch-skip 1 --launch-count 1 $sections --metrics $metrics python3 scripts/ncu_large.py $size"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 120 $cmd 2>&1; } > "${OUT:-/tmp}/ncu-tiled-$size-after.txt"
  grep -c "Section:" "${OUT:-/tmp}/ncu-tiled-$size-after.txt"
done
