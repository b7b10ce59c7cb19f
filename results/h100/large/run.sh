#!/usr/bin/env bash
# Large products on the H100 with the tiled kernel's new choices (cp.async pipelines, the orders
# of work-items and tiles) in its space. Run from the repository root after the prelude:
#   bash results/h100/large/run.sh tune      # a tune of the tiled kernel at 4096 cubed per
#                                            # backend into the shipped databases, then the
#                                            # library tests with them
#   bash results/h100/large/run.sh tune-any  # the same for the tiled kernel for any size at
#                                            # 4097 cubed and 3500 x 2500 x 4500 (the kernel's
#                                            # view of a C-ordered 2500 x 3500 x 4500), then the
#                                            # pipelines' tests on both backends
#   bash results/h100/large/run.sh "1 2"     # in turns: bench --call --sizes large with the
#                                            # databases before the tune (old: the package of an
#                                            # earlier commit, unpacked with
#                                            # `git archive <commit> clgemm | tar -x -C abold`)
#                                            # and after (new: this tree)
set -u
OUT=${OUT:-/tmp/large}
mkdir -p "$OUT"
root=$PWD
if [ "$1" = tune ]; then
  for be in cuda opencl; do
    key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='$be').key)")
    CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm tune --device H100 --backend $be \
      --rungs tiled --shapes 4096x4096x4096 --time ${LARGE_TUNE_S:-150} \
      --database "$root/clgemm/tuning/$key.json" > "$OUT/tune-$be.txt" 2>&1
    echo "tune $be: $?"
    mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
  done
  env CLGEMM_TEST_DEVICE=H100 python3 -m pytest -m "cuda or not cuda" -q -x -rs \
    tests/test_cuda.py tests/test_cuda_gemm.py tests/test_direct.py tests/test_gemm_api.py \
    tests/test_lookup.py tests/test_every_device.py tests/test_rungs_files.py \
    tests/test_rungs_upper.py tests/test_gemm_queues.py tests/test_gemm_overlap.py \
    tests/test_user_tuning.py tests/test_python_api.py tests/test_gemm_stacks.py \
    tests/test_skinny.py > "$OUT/tests.txt" 2>&1
  echo "tests: $?"
  env CLGEMM_TEST_DEVICE=H100 CLGEMM_TEST_BACKEND=cuda python3 -m pytest -q -x -rs \
    tests/test_rungs_upper.py -k "orders or pipeline" > "$OUT/tests-cuda-variants.txt" 2>&1
  echo "tests on CUDA: $?"
  exit 0
fi
if [ "$1" = tune-any ]; then
  for be in cuda opencl; do
    key=$(python3 -c "from clgemm.backends import select_device as s
print(s('H100', backend='$be').key)")
    CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm tune --device H100 --backend $be \
      --rungs tiled-any --shapes 4097x4097x4097,3500x2500x4500 --time ${ANY_TUNE_S:-90} \
      --database "$root/clgemm/tuning/$key.json" > "$OUT/tune-any-$be.txt" 2>&1
    echo "tune-any $be: $?"
    mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
  done
  for be in opencl cuda; do
    env CLGEMM_TEST_DEVICE=H100 CLGEMM_TEST_BACKEND=$be python3 -m pytest -q -x -rs \
      tests/test_rungs_upper.py tests/test_gemm_api.py > "$OUT/tests-any-$be.txt" 2>&1
    echo "tests on $be: $?"
  done
  exit 0
fi
for turn in $1; do
  for be in cuda opencl; do
    for v in old new; do
      dir=$root; [ $v = old ] && dir=$root/abold
      (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} python3 -m clgemm bench --call --device H100 \
         --backend $be --sizes large --c-given --json "$OUT/large-$be-$turn-$v.json" \
         > "$OUT/large-$be-$turn-$v.txt" 2>&1)
      echo "turn $turn $be $v: $?"
    done
  done
done
