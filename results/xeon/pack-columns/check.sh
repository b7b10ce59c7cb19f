#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root, on the host's Xeon through
# PoCL 5.0 after the map's once-made check: verify's quick sweep, the NumPy call tests, and the
# call's timeline at 1024 and 2048 cubed three times. Into $OUT/check.
#   bash results/xeon/pack-columns/check.sh
set -u
W=$OUT/check; mkdir -p "$W"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=/tmp/clgemm-data
head() { echo "# $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader)'s host CPU through PoCL 5.0; at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
quiet() { grep -v "CompilerWarning\|_prg.build"; }
{ head; echo "python3 -m clgemm verify --device xeon --quick"
  timeout 240 python3 -m clgemm verify --device xeon --quick 2>&1 | quiet; } > "$W/verify-quick.txt"
bash scripts/device_tests.sh "$W/tests-host.txt" xeon 150 "-q -x -p no:cacheprovider \
  tests/test_gemm_host_hot.py tests/test_gemm_host_alignment.py tests/test_pack_panels.py"
{ head; echo "python3 scripts/cpu_call_timeline.py xeon 9 1024 2048, three times"
  for i in 1 2 3; do timeout 100 python3 scripts/cpu_call_timeline.py xeon 9 1024 2048 2>&1 \
    | quiet; done; } > "$W/timeline.txt"
head -n 3 "$W/verify-quick.txt"; tail -n 1 "$W/tests-host.txt"; cat "$W/timeline.txt"
