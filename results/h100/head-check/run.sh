#!/usr/bin/env bash
# At the library's last commit: results/h100/helper-block/run-check.sh (the H100's call tests
# and the long-K products that sum slices), the call tests with the Xeon as the test device, and
# the tiled kernel alone against cuBLAS at 4096 and 8192 cubed on both backends (bench without
# --call; the times include the transpose of B). From the repository root after the prelude;
# into $OUT/helper-check.tgz and $OUT/head-check.tgz:
#   bash results/h100/head-check/run.sh
set -u
bash results/h100/helper-block/run-check.sh
W=${OUT:-/tmp}/head-check
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf head-check.tgz.part head-check && mv head-check.tgz.part head-check.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py tests/test_gemm_host_hot.py"
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 140 "-q -p no:cacheprovider $calls"
pack
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm bench --device H100 --backend $be --sizes 4096,8192 --rungs tiled --json $W/kernel-$be.json"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 90 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/kernel-$be.txt"
  grep -i "cublas\|clblast" "$W/kernel-$be.txt" | tail -2
done
pack
rm -rf "$W"
