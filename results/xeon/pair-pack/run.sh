#!/usr/bin/env bash
# Both operands' panels in one launch (pack_panels_pair), on the GPU machine: step "tests" runs
# the library's call tests on its 16-core Xeon (PoCL 5.0) and on the H100 (whose builds of
# blas_helpers.cl take the new kernel too); step "turns" runs bench --call on NumPy arrays on
# the Xeon in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new).
# From the repository root after the prelude:
#   bash results/xeon/pair-pack/run.sh OUTDIR "STEPS" "TURNS"
set -u
out=$1 steps=$2 turns=${3:-}
mkdir -p "$out"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
tests="-q -p no:cacheprovider tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_repeated.py tests/test_rungs_files.py"
if [[ " $steps " == *" tests "* ]]; then
  bash scripts/device_tests.sh "$out/tests-xeon.txt" xeon 240 "$tests"
  bash scripts/device_tests.sh "$out/tests-H100.txt" H100 200 "$tests tests/test_cuda_gemm.py"
fi
if [[ " $steps " == *" turns "* ]]; then
  HEAD="# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, PoCL 5.0 (the H100 machine's CPU); at commit ${COMMIT:-?}" \
  TURN_TIMEOUT=150 bash scripts/turns.sh "$out" "$turns" \
    "call-numpy=--device xeon --arrays numpy --sizes 256,1024,2048,4096"
fi
