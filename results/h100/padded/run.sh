#!/usr/bin/env bash
# Products whose sizes the tiled kernel's tiles do not divide, on the tiled kernel padded (this
# tree) against the tiled kernel for any size (old: the package of the commit before, unpacked
# with `git archive <commit> clgemm | tar -x -C abold`), in turns on one loan; then the library
# tests on both backends and on the machine's CPU. Run from the repository root after the
# prelude:  bash results/h100/padded/run.sh "1 2"
set -u
OUT=${OUT:-/tmp/padded}
mkdir -p "$OUT"
root=$PWD
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
gpu=$(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | head -n 1)
versions=$(python3 -c "import cupy, pyopencl, numpy; print(f'CuPy {cupy.__version__}, pyopencl {pyopencl.VERSION_TEXT}, NumPy {numpy.__version__}')")
header() { echo "# $gpu; $versions; $(date -u +%FT%TZ); at commit ${COMMIT:-?} ($1; old: ${OLD_COMMIT:-?}): $2"; }
extra=${EXTRA_SIZES:-3000,6000,2047,4500x3500x2500,3000x5000x2100}
for turn in $1; do
  for be in cuda opencl; do
    for v in old new; do
      dir=$root; [ $v = old ] && dir=$root/abold
      for set in large extra; do
        sizes=$set; [ $set = extra ] && sizes=$extra
        [ $set = extra ] && [ "$turn" != "${1%% *}" ] && continue
        cmd="python3 -m clgemm bench --call --device H100 --backend $be --sizes $sizes --c-given --json $set-$be-$turn-$v.json"
        { header "$v" "$cmd"; (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout 150 $cmd 2>&1); } \
          > "$OUT/$set-$be-$turn-$v.txt"
        mv "$dir/$set-$be-$turn-$v.json" "$OUT/" 2>/dev/null
        echo "turn $turn $set $be $v: $(tail -n 2 "$OUT/$set-$be-$turn-$v.txt" | head -n 1)"
      done
    done
  done
done
for dev in H100:opencl H100:cuda xeon:opencl; do
  cmd="env CLGEMM_TEST_DEVICE=${dev%%:*} CLGEMM_TEST_BACKEND=${dev##*:} python3 -m pytest -q -rs -x tests/test_gemm_api.py tests/test_every_device.py"
  { header new "$cmd"; timeout 200 $cmd 2>&1 | tail -n 15; } > "$OUT/tests-${dev%%:*}-${dev##*:}.txt"
  echo "tests $dev: $(tail -n 1 "$OUT/tests-${dev%%:*}-${dev##*:}.txt")"
done
