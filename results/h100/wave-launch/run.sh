#!/usr/bin/env bash
# gemm()'s calls with the last groups of a launch counted a unit at a time (`lookup.wave_fill`)
# and a second launch counted per backend (`splits.PACK_LAUNCH_S`), against the package of
# $OLD_COMMIT (unpacked in .whl/abold), in turns on one GPU, one backend at a time (C given,
# device arrays): with the seventh fresh tunes' databases (.whl/db7) the large products, the
# classes and a sample of the shapes whose choice the two changes move (SAMPLE_OPENCL,
# SAMPLE_CUDA), the sets of each backend as SETS_OPENCL and SETS_CUDA name them; with the
# `--device all` tune's database (.whl/dball) the classes through OpenCL. Part `tests`: the GPU
# tests of the library path on this tree; part `xeon`: this tree's calls on NumPy arrays on the
# host's CPU through PoCL, with the Xeon's database of that tune; part `alone`: the shapes in
# ALONE through OpenCL, each in a process of its own, in turns; part `verify`: verify's quick
# sweep on both backends with the seventh databases. Run from the repository root
# after the prelude, each part as asked:
#   PARTS="tests seventh dball xeon" TURNS="1" bash results/h100/wave-launch/run.sh
# Into $OUT/wave-launch/ (the turns into RUN and RUN-device-all, RUN by default seventh), packed into $OUT/wave-launch.tgz after each part.
set -u
W=${OUT:-/tmp}/wave-launch
mkdir -p "$W"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=/tmp/wave-launch-data CUDA_VISIBLE_DEVICES=0
[ -d abold ] || cp -r .whl/abold abold
pack() { (cd "$(dirname "$W")" && tar czf wave-launch.tgz.part wave-launch && mv wave-launch.tgz.part wave-launch.tgz); }
head="# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
sets() {  # BACKEND: the sets measured with the seventh databases
  local be=$1 sample which set
  [ "$be" = opencl ] && sample=$SAMPLE_OPENCL which=${SETS_OPENCL:-large classes sample}
  [ "$be" = cuda ] && sample=$SAMPLE_CUDA which=${SETS_CUDA:-large classes sample}
  for set in $which; do
    [ "$set" = sample ] && echo "sample-$be=--device NVIDIA --backend $be --sizes $sample --c-given" \
      || echo "$set-$be=--device NVIDIA --backend $be --sizes $set --c-given"
  done
}
for part in ${PARTS:-tests seventh dball}; do
  case $part in
    tests) OUT=$W/tests bash scripts/gpu_call_bench.sh tests > /dev/null 2>&1
           echo "tests: $(tail -n 3 "$W/tests/tests.log" | tr '\n' ' ')" ;;
    seventh) for be in opencl cuda; do
               mapfile -t specs < <(sets $be)
               HEAD=$head OLD_COMMIT=${OLD_COMMIT:-?} CLGEMM_SHIPPED_TUNING=0 \
                 CLGEMM_RESULTS=$PWD/.whl/db7 bash scripts/turns.sh "$W/${RUN:-seventh}" "${TURNS:-1}" "${specs[@]}"
               pack
             done ;;
    dball) HEAD=$head OLD_COMMIT=${OLD_COMMIT:-?} CLGEMM_SHIPPED_TUNING=0 \
             CLGEMM_RESULTS=$PWD/.whl/dball bash scripts/turns.sh "$W/${RUN:-seventh}-device-all" "${TURNS:-1}" \
             "classes-opencl=--device NVIDIA --backend opencl --sizes classes --c-given" ;;
    xeon) { echo "# $(lscpu | grep 'Model name' | sed 's/ *Model name: *//'); at commit ${COMMIT:-?}; $(date -u +%FT%TZ): python3 -m clgemm bench --call --device xeon --sizes 1024,2048,4096 --arrays numpy"
            CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$PWD/.whl/dball timeout 200 python3 -m clgemm \
              bench --call --device xeon --sizes 1024,2048,4096 --arrays numpy \
              --json "$W/xeon-call.json" 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/xeon-call.txt"
          tail -n 8 "$W/xeon-call.txt" ;;
    alone) for shape in ${ALONE//,/ }; do
             HEAD=$head OLD_COMMIT=${OLD_COMMIT:-?} CLGEMM_SHIPPED_TUNING=0 \
               CLGEMM_RESULTS=$PWD/.whl/db7 bash scripts/turns.sh "$W/${RUN:-seventh}-alone" "${TURNS:-1}" \
               "$shape-opencl=--device NVIDIA --backend opencl --sizes $shape --c-given"
           done ;;
    verify) for be in opencl cuda; do
              { echo "$head; $(date -u +%FT%TZ): python3 -m clgemm verify --device NVIDIA --backend $be --quick"
                CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$PWD/.whl/db7 timeout 120 python3 -m clgemm \
                  verify --device NVIDIA --backend $be --quick 2>&1 | grep -v "CompilerWarning\|_prg.build"
              } > "$W/verify-$be.txt"
              tail -n 2 "$W/verify-$be.txt"
            done ;;
  esac
  pack
done
