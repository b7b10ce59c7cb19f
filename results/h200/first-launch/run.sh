#!/usr/bin/env bash
# The borrowed configurations' trial on every device of the GPU machine: the trial's tests and
# verify's on the H200 through CUDA and OpenCL and on the Xeon through PoCL 5.0, then verify
# --quick on both of the H200's backends (where a configuration the lookup takes from the H100
# is tried in a child process first). Into $OUT; from the repository root after the prelude:
#   bash results/h200/first-launch/run.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
out=${OUT:-/tmp}
bash scripts/every_device_tests.sh "$out" H200 300 \
  "-q -p no:cacheprovider tests/test_first_launch.py tests/test_verify.py"
for be in opencl cuda; do
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); $(date -u +%FT%TZ); at commit ${COMMIT:-?}: python3 -m clgemm verify --device H200 --backend $be --quick"
    timeout 400 python3 -m clgemm verify --device H200 --backend $be --quick 2>&1
    echo "exit $?"; } > "$out/verify-$be.txt"
  tail -2 "$out/verify-$be.txt"
done
