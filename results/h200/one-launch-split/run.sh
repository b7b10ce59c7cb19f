#!/usr/bin/env bash
# The tiled kernel summing its slices of K in its own launch (SUM_SLICES), against the tree
# before it, where one more launch summed them. On the GPU machine after the prelude, from the
# repository root with results/h200/one-launch-split/sum-slices.patch applied (git apply) and
# the tree before in .cmp/old (git archive 5e607cd clgemm | tar -x -C .cmp/old), into
# $OUT/one-launch-split:
#   bash results/h200/one-launch-split/run.sh tests    the call tests of splits, queues and
#                                                      streams on the H200's backends and the
#                                                      Xeon; the fence's PTX
#   [ROUNDS="1 2"] [SHAPES=...] bash results/h200/one-launch-split/run.sh measure
#        gemm()'s calls at SHAPES (where the shipped databases split K on the tiled kernel),
#        old tree and new in turns, on both backends, C given
set -u
mode=$1
W=${OUT:-/tmp}/one-launch-split DEVICE=${DEVICE:-NVIDIA}
SHAPES=${SHAPES:-1024x1024x1024,4096x32x4096,4096x64x4096,32x4096x4096,64x4096x4096,256x256x16384,512x512x16384,512x512x2000,384x384x4000,256x384x16000}
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=/tmp/one-launch-split-data
mkdir -p "$W"
head_of() { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
if [ "$mode" = tests ]; then
  T="tests/test_gemm_api.py tests/test_rungs_upper.py tests/test_gemm_queues.py"
  K="split or tickets or slices or queue or stream"
  export K
  bash scripts/device_tests.sh "$W/tests-opencl.txt" H200 200 "-q -x $T"
  CLGEMM_TEST_BACKEND=cuda bash scripts/device_tests.sh "$W/tests-cuda.txt" H200 200 "-q -x $T"
  bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 240 "-q -x $T"
  { head_of; python3 scripts/sum_slices_ptx.py "$DEVICE"; } > "$W/ptx.txt" 2>&1
  tail -3 "$W/ptx.txt"
  exit 0
fi
root=$PWD  # python3 -m puts the working folder first on the path: each tree runs from its own
for turn in ${ROUNDS:-1 2}; do
  for be in opencl cuda; do
    for side in old new; do
      tree=$PWD; [ "$side" = old ] && tree=$PWD/.cmp/old
      f=$W/calls-$be-$turn-$side
      { echo "$(head_of) (the $side tree, shipped databases): python3 -m clgemm bench --call --device $DEVICE --backend $be --sizes $SHAPES --c-given --json $f.json"
        cd "$tree" && timeout 200 python3 -m clgemm bench --call --device "$DEVICE" \
          --backend $be --sizes "$SHAPES" --c-given --json "$f.json" 2>&1 \
          | grep -v "CompilerWarning\|_prg.build"; cd "$root"; } > "$f.txt"
      tail -n 1 "$f.txt"
    done
  done
done
