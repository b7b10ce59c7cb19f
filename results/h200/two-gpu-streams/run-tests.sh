#!/usr/bin/env bash
# On a two-GPU machine, after the prelude, from the repository root: gemm()'s queue and stream
# tests on every device (both GPUs through OpenCL and the CUDA path, the host's Xeon) and the
# CUDA path's tests, this tree. Into $OUT/two-gpu-tests.
set -u
W=$OUT/two-gpu-tests; mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | paste -sd';'); $(date -u +%FT%TZ); at commit ${COMMIT:-?}"
for file in test_gemm_queues test_cuda_gemm; do
  { echo "$head"; echo "python3 -m pytest -p no:cacheprovider tests/$file.py -q -rfE"
    timeout 280 python3 -m pytest -p no:cacheprovider tests/$file.py -q -rfE 2>&1 | tail -12
  } > "$W/$file.txt"
done
(cd "$OUT" && tar czf two-gpu-tests.tgz two-gpu-tests && rm -rf two-gpu-tests)
