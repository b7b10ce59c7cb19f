#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: gemm()'s call tests and the
# panels' pack tests on the GPU named H200 (CUDA path, OpenCL) and the host's Xeon (PoCL 5.0),
# into $OUT/gemm-tests; then on the Xeon the call's timeline at 1024 cubed with the pack's
# PANEL_RUN at 64 (gemm()'s), 256 and 1024, in turns, twice.
#   bash results/h200/gemm-tests-pack-columns/run.sh
set -u
W=$OUT/gemm-tests; mkdir -p "$W"
bash scripts/every_device_tests.sh "$W" H200 170 "-q -x -p no:cacheprovider \
  tests/test_gemm_api.py tests/test_gemm_stacks.py tests/test_gemm_queues.py \
  tests/test_gemm_overlap.py tests/test_gemm_host_alignment.py tests/test_every_device.py \
  tests/test_cuda_gemm.py tests/test_gemm_new_c.py tests/test_gemm_same_call.py \
  tests/test_gemm_repeated.py tests/test_gemm_host_hot.py tests/test_pack_panels.py"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
{ echo "# $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader)'s host CPU through PoCL 5.0; at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
  for i in 1 2; do for run in 64 256 1024; do
    echo "python3 scripts/cpu_timeline_panel_run.py $run xeon 9 1024"
    timeout 60 python3 scripts/cpu_timeline_panel_run.py $run xeon 9 1024 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"
  done; done; } > "$W/panel-run-xeon.txt"
tail -n 20 "$W/panel-run-xeon.txt"
