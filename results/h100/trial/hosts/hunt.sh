#!/usr/bin/env bash
# From the repository root after the prelude: bash results/h100/trial/hosts/hunt.sh
# on the GPU machine's Xeon: does the skinny kernel's global configuration come out wrong on this
# host? If so: the variants, the trial and gemm() on it (diag.py), then the same with PoCL's and
# pyopencl's caches out of the way, and with PoCL's other work-group method
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH=$PWD:${PYTHONPATH:-} XDG_DATA_HOME=/tmp/hunt-data
lscpu > $OUT/lscpu.txt; grep "Model:\|Stepping" $OUT/lscpu.txt
quiet() { grep -v "warnings generated\|CompilerWarning\|_prg.build"; }
first=$(timeout 60 python3 -m pytest -p no:cacheprovider -q -m "cuda or not cuda" tests/test_skinny.py -k "opencl:1 and global" 2>&1 | tail -n 1)
echo "first: $first"
case "$first" in
  *failed*)
    timeout 150 python3 "$here/diag.py" xeon 2>&1 | quiet | tee $OUT/diag.txt
    echo "== fresh PoCL cache, no pyopencl cache"
    POCL_CACHE_DIR=/tmp/pocl-fresh PYOPENCL_NO_CACHE=1 timeout 90 python3 -m pytest -p no:cacheprovider -q -m "cuda or not cuda" tests/test_skinny.py -k "opencl:1 and global" 2>&1 | tail -n 1
    for m in cbs loopvec; do echo "== POCL_WORK_GROUP_METHOD=$m"; POCL_CACHE_DIR=/tmp/pocl-$m POCL_WORK_GROUP_METHOD=$m PYOPENCL_NO_CACHE=1 timeout 90 python3 -m pytest -p no:cacheprovider -q -m "cuda or not cuda" tests/test_skinny.py -k "opencl:1 and global" 2>&1 | tail -n 1; done
    ;;
esac
