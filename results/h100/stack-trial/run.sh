#!/usr/bin/env bash
# Trials in the call's form and stacks' trials (clgemm/library/signatures.py, stack_trial.py) on
# the GPU machine: the GPU tests of the library path (its devices include the host's CPU through
# PoCL), scripts/trial_forms.py on the GPU through both backends and on the CPU (every trial in
# its call's form?), and verify's quick sweep on all three. Run from the repository root after
# the prelude; into $OUT/stack-trial/:
#   PARTS="tests forms verify" bash results/h100/stack-trial/run.sh
set -u
W=${OUT:-/tmp}/stack-trial
mkdir -p "$W"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=/tmp/stack-trial-data CUDA_VISIBLE_DEVICES=0
head="# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); $(lscpu | grep 'Model name' | sed 's/ *Model name: *//'); at commit ${COMMIT:-?}"
quiet() { grep -v "CompilerWarning\|_prg.build\|warnings generated"; }
for part in ${PARTS:-tests forms verify}; do
  case $part in
    tests) OUT=$W/tests bash scripts/gpu_call_bench.sh tests > /dev/null 2>&1
           { echo "$head; $(date -u +%FT%TZ): bash scripts/gpu_call_bench.sh tests"
             cat "$W/tests/tests.log"; } > "$W/tests.txt"
           rm -rf "$W/tests"; tail -n 2 "$W/tests.txt" ;;
    forms|forms-xeon)
           specs=$([ "$part" = forms ] && echo "NVIDIA,cuda NVIDIA,opencl" || echo "xeon,opencl")
           for spec in $specs; do
             set -- ${spec/,/ }
             { echo "$head; $(date -u +%FT%TZ): python3 scripts/trial_forms.py $1 $2"
               (cd scripts && timeout 280 python3 trial_forms.py "$1" "$2" 2>&1 | quiet)
             } > "$W/forms-$1-$2.txt"
             tail -n 3 "$W/forms-$1-$2.txt"
           done ;;
    verify) for spec in "NVIDIA cuda" "NVIDIA opencl" "xeon opencl"; do
              set -- $spec
              { echo "$head; $(date -u +%FT%TZ): python3 -m clgemm verify --device $1 --backend $2 --quick"
                timeout 200 python3 -m clgemm verify --device "$1" --backend "$2" --quick 2>&1 | quiet
              } > "$W/verify-$1-$2.txt"
              tail -n 2 "$W/verify-$1-$2.txt"
            done ;;
  esac
done
