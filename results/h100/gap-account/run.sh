#!/usr/bin/env bash
# Where each SGEMM's share of the FMA peak goes, at 4096 and 8192 cubed on the CUDA path: one
# Nsight Compute run per kernel and size with the sections and the metrics `clgemm model
# --counters` reads (cuBLAS's kernel through scripts/ncu_cublas.py, the tiled kernel as gemm()
# runs it through scripts/ncu_large.py); then gemm()'s calls over the large products on both
# backends, C given, device arrays. From the repository root after the prelude; into
# $OUT/gap-account.tgz, packed after each step:
#   bash results/h100/gap-account/run.sh
set -u
W=${OUT:-/tmp}/gap-account
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf gap-account.tgz.part gap-account && mv gap-account.tgz.part gap-account.tgz); }
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); CuPy $(python3 -c 'import cupy; print(cupy.__version__)'); $(ncu --version | tail -1); at commit ${COMMIT:-?}"
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis"
metrics="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_global_ld.sum"
for size in 4096 8192; do
  for which in cublas:ncu_cublas.py:gemm tiled:ncu_large.py:gemm_tiled; do
    IFS=: read -r name script kernel <<< "$which"
    cmd="ncu --kernel-name regex:$kernel --launch-skip 1 --launch-count 1 $sections --metrics $metrics python3 scripts/$script $size"
    { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 150 $cmd 2>&1; } > "$W/ncu-$name-$size.txt"
    grep -c "Section:" "$W/ncu-$name-$size.txt"
  done
  pack
done
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/large-$be.txt" 120 python3 -m clgemm bench --call --device H100 \
    --backend $be --sizes large --c-given --json "$W/large-$be.json"
  pack
done
rm -rf "$W"
