#!/usr/bin/env bash
# With the databases of tune/ and gemm()'s rules as committed: verify's quick sweep on both
# backends, the library's call tests on the H100, then `bench --call` over the classes and the
# small squares in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new).
# From the repository root after the prelude; into $OUT/rbl-final.tgz:
#   bash results/h100/read-b-launch/run-final.sh "TURNS"
set -u
turns=$1
W=${OUT:-/tmp}/rbl-final
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for be in cuda opencl; do
  cmd="python3 -m clgemm verify --device H100 --backend $be --quick"
  { echo "$head; $(date -u +%FT%TZ): $cmd"; timeout 100 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/verify-$be.txt"
  tail -n 2 "$W/verify-$be.txt"
done
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 200 \
  "-q -p no:cacheprovider tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_cuda_gemm.py"
specs=()
for s in classes small; do
  specs+=("$s-cuda=--device H100 --backend cuda --sizes $s --c-given"
          "$s-opencl=--device H100 --backend opencl --sizes $s --c-given")
done
TURN_TIMEOUT=100 bash scripts/turns.sh "$W" "$turns" "${specs[@]}"
cd "$(dirname "$W")" && tar czf rbl-final.tgz rbl-final && rm -rf rbl-final
