#!/usr/bin/env bash
# The ladder and verify on the GPU machine's 16-core Xeon through PoCL 5.0, where rung 10's
# family configuration kills the runtime at its first launch (../rung10-pocl5/): this tree,
# which tries each borrowed configuration in a child process first, and the package named by
# OLD (a folder holding an older `clgemm/`), which does not. Then the first-hour tests and
# tests/test_first_launch.py with the Xeon as the test device. Into $OUT; from the repository
# root after the prelude:
#   OLD=.whl/abold18 bash results/xeon/first-launch/run.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
out=${OUT:-/tmp}
stamp="the host of an $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader), its CPU through PoCL 5.0; $(date -u +%FT%TZ)"
{ echo "# $stamp; at commit ${COMMIT:-?}: python3 -m clgemm ladder --device xeon"
  timeout 300 python3 -m clgemm ladder --device xeon --json "$out/ladder.json" 2>&1
  echo "exit $?"; } > "$out/ladder.txt"
{ echo "# $stamp; at commit ${COMMIT:-?}: python3 -m clgemm verify --device xeon --quick --rungs 10"
  timeout 300 python3 -m clgemm verify --device xeon --quick --rungs 10 2>&1
  echo "exit $?"; } > "$out/verify.txt"
if [ -n "${OLD:-}" ]; then
  here=$PWD
  { echo "# $stamp; the package in $OLD: python3 -m clgemm verify --device xeon --quick --rungs 10"
    (cd "$OLD" && PYTHONPATH=$here/$OLD:$PYTHONPATH timeout 300 python3 -m clgemm verify \
       --device xeon --quick --rungs 10 2>&1)
    echo "exit $?"; } > "$out/verify-old.txt"
fi
CLGEMM_TEST_DEVICE=xeon timeout 400 python3 -m pytest -q -p no:cacheprovider \
  tests/test_first_hour.py tests/test_first_launch.py > "$out/tests-xeon.txt" 2>&1
echo "exit $?" >> "$out/tests-xeon.txt"
tail -n 3 "$out"/*.txt
