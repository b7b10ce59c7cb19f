#!/usr/bin/env bash
# Why the warps of each 4096-cubed SGEMM wait: Nsight Compute's stall reasons per issued
# instruction for cuBLAS's kernel (scripts/ncu_cublas.py) and the tiled kernel as gemm() runs it
# on the CUDA path (scripts/ncu_large.py), with the instruction mix by pipeline. From the
# repository root after the prelude:
#   bash results/h100/gap/run-stalls.sh OUTDIR
set -u
out=$1
mkdir -p "$out"
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); CuPy $(python3 -c 'import cupy; print(cupy.__version__)'); $(ncu --version | tail -1); $(date -u +%FT%TZ), at commit ${COMMIT:-?}"
metrics="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_ldgsts.sum,smsp__inst_executed_op_global_st.sum,sm__cycles_elapsed.avg"
for which in cublas:ncu_cublas.py:gemm tiled:ncu_large.py:gemm_tiled; do
  IFS=: read -r name script kernel <<< "$which"
  cmd="ncu --kernel-name regex:$kernel --launch-skip 1 --launch-count 1 --metrics $metrics python3 scripts/$script"
  { echo "$head: $cmd"; timeout 200 $cmd 2>&1; } > "$out/stalls-$name.txt"
done
