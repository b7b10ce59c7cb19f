#!/usr/bin/env bash
# On an NVIDIA machine: the GPU tests of the library path (CUDA backend, direct kernel, gemm() on
# NVIDIA's OpenCL), the quick verify sweep on both backends, and `clgemm bench --call` on both
# backends (CLBlast untuned and with the tuned parameters in results/<gpu>/). Logs and JSON go to
# $OUT (the device tool's folder; /tmp/gpu_call_bench elsewhere); summary.txt has each step's
# exit status. Run from the repository root after the prelude:
#   . .whl/prelude.sh && bash scripts/gpu_call_bench.sh [steps...]
# Steps: tests verify bench-cuda bench-opencl (default: all); small-cuda and small-opencl (the
# microseconds of repeated calls at 64-1024, C given to every call); stacks-cuda and
# stacks-opencl (stacks of products beside cp.matmul and CLBlastSgemmStridedBatched);
# classes-cuda and classes-opencl (the classes of shapes, C given); split-sweep (the direct
# kernel's configurations and splits of K at the skinny and long-K classes, scripts/split_sweep.py);
# skinny-sweep (the same for the skinny kernel on both backends, scripts/skinny_sweep.py);
# tiled-split (gemm() with the tiled kernel forced at every split of K, scripts/tiled_split_sweep.py);
# xeon-tests, xeon-call and xeon-parts (the library path's tests, `bench --call` on NumPy arrays at
# 1024-4096, and where such a call's time goes, on the machine's CPU through PoCL); xeon-tune (the
# plain tune of that CPU into ./xeon-tune, stopped as Ctrl-C stops it after $XEON_TUNE_S seconds,
# 540 by default, and packed into $OUT/xeon-tune.tgz: unpacked in the checkout, the next run
# resumes it) and xeon-tuned-call (`bench --call` on it with that tuning); and on request
# tune-ladder (a short tune of rungs 9 and 10 at 4096, both backends, into the shipped databases
# in clgemm/tuning/, journals into results/journals/), tune-medium (the tiled kernel at 768 and
# 1024 cubed, 40 s each, both backends, into the shipped databases, copied to $OUT/tuning/),
# tune-small (the direct kernel at the shapes in $SMALL_SHAPES, by default 128, 256 and 512
# cubed, $SMALL_TUNE_S seconds each, 30 by default, the same way; its entries also choose the
# tile of stacks of small products, so results/h100/call/tune-small-ab/run.sh weighs them in
# turns before they are kept), tune-split (the tiled kernel, measured with the slices of K gemm()
# runs it in, at the long-K and skinny shapes in $SPLIT_SHAPES as the kernels see them, by default
# those of the classes below 0.8x cuBLAS, $SPLIT_TUNE_S seconds each, 45 by default, the same
# way), tune-skinny (the skinny kernel at the shapes in $SKINNY_SHAPES, by default N and then M of 16
# with the other sizes 4096, $SKINNY_TUNE_S seconds each, 40 by default, the same way) and ladder
# (the ladder at 4096 on both backends, defaults and tuned, JSON into $OUT).
set -u
OUT=${OUT:-/tmp/gpu_call_bench}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=${PYTHONPATH:-}:$PWD
export XDG_DATA_HOME=${XDG_DATA_HOME:-/tmp/clgemm-data}
failed=0

step() {
  local name=$1
  shift
  echo "=== $name: $*" | tee -a "$OUT/summary.txt"
  stdbuf -oL -eL "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$OUT/$name.log"
  echo "=== $name: exit $rc" | tee -a "$OUT/summary.txt"
  [ "$rc" -eq 0 ] || failed=1
}

gpu=${CLGEMM_GPU:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 \
                    | grep -o -E '[A-Z][0-9]{2,4}[A-Za-z]*' | head -n 1)}
gpu=${gpu:-NVIDIA}
tag=$(echo "$gpu" | tr 'A-Z' 'a-z')
params=results/$tag/clblast-xgemm-tuned.json
[ -e "$params" ] || params=results/h100/clblast-xgemm-tuned.json
steps=${*:-tests verify bench-cuda bench-opencl}
# one test process per core where pytest-xdist is installed
parallel=$(python3 -c "import xdist" 2>/dev/null && echo "-n 8 --dist worksteal")

for s in $steps; do
  case $s in
    tests) step tests env CLGEMM_TEST_DEVICE="$gpu" python3 -m pytest -m "cuda or not cuda" -q -x \
             -rs tests/test_cuda.py tests/test_cuda_gemm.py tests/test_direct.py tests/test_gemm_api.py \
             tests/test_lookup.py tests/test_every_device.py tests/test_rungs_files.py \
             tests/test_rungs_upper.py tests/test_gemm_queues.py tests/test_gemm_overlap.py \
             tests/test_user_tuning.py tests/test_python_api.py tests/test_gemm_stacks.py \
             tests/test_skinny.py tests/test_gemm_trial.py tests/test_gemm_stack_trial.py ;;
    tune-ladder) for be in opencl cuda; do
                   key=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$be').key)")
                   step tune-$be env CLGEMM_RESULTS="$PWD/results" python3 -m clgemm tune \
                     --device "$gpu" --backend $be --rungs 9,10 --size 4096 --time 45 \
                     --database "$PWD/clgemm/tuning/$key.json"
                 done ;;
    tune-medium) for be in cuda opencl; do
                   key=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$be').key)")
                   step tune-medium-$be env CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm \
                     tune --device "$gpu" --backend $be --rungs tiled --shapes 768,1024 --time 40 \
                     --database "$PWD/clgemm/tuning/$key.json"
                   mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
                 done ;;
    tune-small) for be in cuda opencl; do
                  key=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$be').key)")
                  step tune-small-$be env CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm \
                    tune --device "$gpu" --backend $be --rungs direct --time ${SMALL_TUNE_S:-30} \
                    --shapes ${SMALL_SHAPES:-128,256,512} \
                    --database "$PWD/clgemm/tuning/$key.json"
                  mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
                done ;;
    tune-split) for be in cuda opencl; do
                  key=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$be').key)")
                  step tune-split-$be env CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm \
                    tune --device "$gpu" --backend $be --rungs tiled --time ${SPLIT_TUNE_S:-45} \
                    --shapes ${SPLIT_SHAPES:-4096x32x4096,4096x64x4096,512x512x16384,256x256x16384} \
                    --database "$PWD/clgemm/tuning/$key.json"
                  mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
                done ;;
    tune-skinny) for be in cuda opencl; do
                   key=$(python3 -c "from clgemm.backends import select_device as s
print(s('$gpu', backend='$be').key)")
                   step tune-skinny-$be env CLGEMM_RESULTS=/tmp/clgemm-journals python3 -m clgemm \
                     tune --device "$gpu" --backend $be --rungs skinny --time ${SKINNY_TUNE_S:-40} \
                     --shapes ${SKINNY_SHAPES:-4096x16x4096,16x4096x4096} \
                     --database "$PWD/clgemm/tuning/$key.json"
                   mkdir -p "$OUT/tuning" && cp "clgemm/tuning/$key.json" "$OUT/tuning/"
                 done ;;
    ladder) for be in opencl cuda; do
              step ladder-$be-defaults python3 -m clgemm ladder \
                --device "$gpu" --backend $be --size 4096 --rungs all,tiled,tiled-any --defaults \
                --json "$OUT/ladder-$be-4096.json"
              step ladder-$be-tuned python3 -m clgemm ladder \
                --device "$gpu" --backend $be --size 4096 --rungs all,tiled,tiled-any \
                --json "$OUT/ladder-$be-4096-tuned.json"
            done ;;
    verify) step verify-cuda python3 -m clgemm verify --device "$gpu" --backend cuda --quick
            step verify-opencl python3 -m clgemm verify --device "$gpu" --backend opencl --quick ;;
    bench-cuda) step bench-call-cuda python3 -m clgemm bench --call --device "$gpu" --backend cuda \
                  --json "$OUT/bench-call-cuda.json" ;;
    small-cuda) step small-call-cuda python3 -m clgemm bench --call --device "$gpu" --backend cuda \
                  --sizes small --c-given --json "$OUT/small-call-cuda.json" ;;
    small-opencl) step small-call-opencl python3 -m clgemm bench --call --device "$gpu" \
                    --backend opencl --sizes small --c-given --clblast-params "$params" \
                    --json "$OUT/small-call-opencl.json" ;;
    stacks-cuda) step stacks-call-cuda python3 -m clgemm bench --call --device "$gpu" \
                   --backend cuda --sizes stacks --c-given --json "$OUT/stacks-call-cuda.json" ;;
    stacks-opencl) step stacks-call-opencl python3 -m clgemm bench --call --device "$gpu" \
                     --backend opencl --sizes stacks --c-given --clblast-params "$params" \
                     --json "$OUT/stacks-call-opencl.json" ;;
    classes-cuda) step classes-call-cuda python3 -m clgemm bench --call --device "$gpu" \
                    --backend cuda --sizes classes --c-given --json "$OUT/classes-call-cuda.json" ;;
    classes-opencl) step classes-call-opencl python3 -m clgemm bench --call --device "$gpu" \
                      --backend opencl --sizes classes --c-given --clblast-params "$params" \
                      --json "$OUT/classes-call-opencl.json" ;;
    split-sweep) step split-sweep-cuda python3 scripts/split_sweep.py "$gpu" cuda 30 ;;
    skinny-sweep) for be in cuda opencl; do
                    step skinny-sweep-$be python3 scripts/skinny_sweep.py "$gpu" $be ${SKINNY_SAMPLE:-30}
                  done ;;
    tiled-split) step tiled-split-cuda python3 scripts/tiled_split_sweep.py "$gpu" cuda
                 step tiled-split-opencl python3 scripts/tiled_split_sweep.py "$gpu" opencl ;;
    xeon-tests) step xeon-tests env CLGEMM_TEST_DEVICE=xeon python3 -m pytest -q -x $parallel \
                  tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py \
                  tests/test_gemm_stacks.py tests/test_python_api.py tests/test_skinny.py ;;
    xeon-parts) step xeon-parts python3 scripts/numpy_call_parts.py xeon 1024 2048 ;;
    xeon-tune) step xeon-tune env CLGEMM_RESULTS="$PWD/xeon-tune" timeout -s INT "${XEON_TUNE_S:-540}" \
                 python3 -m clgemm tune --device xeon
               tar czf "$OUT/xeon-tune.tgz" xeon-tune ;;
    xeon-tuned-call) step xeon-tuned-call env CLGEMM_RESULTS="$PWD/xeon-tune" python3 -m clgemm \
                       bench --call --device xeon --sizes 1024,2048,4096 \
                       --json "$OUT/xeon-tuned-call.json" ;;
    xeon-call) step xeon-call python3 -m clgemm bench --call --device xeon \
                 --sizes 1024,2048,4096 --json "$OUT/xeon-call.json" ;;
    bench-opencl) step bench-call-opencl python3 -m clgemm bench --call --device "$gpu" \
                    --backend opencl --clblast-params "$params" --json "$OUT/bench-call-opencl.json" ;;
  esac
done
cat "$OUT/summary.txt"
exit "$failed"
