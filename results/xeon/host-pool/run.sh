#!/usr/bin/env bash
# A repeated call's new C from the host pool, on the GPU machine's CPU through PoCL: the call
# tests on NumPy arrays with the Xeon as the test device, then `bench --call --arrays numpy` at
# SIZES (default 1024,2048), a new C every call, in TURNS with the package of $OLD_COMMIT (old,
# ./abold) and this tree (new). From the repository root after the prelude; into
# $OUT/host-pool/ (and host-pool.tgz):
#   bash results/xeon/host-pool/run.sh "1 2 3"
set -u
turns=$1
W=${OUT:-/tmp}/host-pool
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 150 \
  "-q -p no:cacheprovider tests/test_gemm_host_hot.py tests/unit/test_host_pool.py tests/test_gemm_api.py"
head="# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader) and the machine's CPU through PoCL 5.0"
HEAD="$head; at commit ${COMMIT:-?}" TURN_TIMEOUT=150 bash scripts/turns.sh "$W/turns" "$turns" \
  "call=--device xeon --arrays numpy --sizes ${SIZES:-1024,2048}"
(cd "$(dirname "$W")" && tar czf host-pool.tgz host-pool)
