#!/usr/bin/env bash
# Stored configurations tried before first use (clgemm/library/trial.py) on the GPU machine:
# the GPU tests of the library path (its devices include the host's CPU through PoCL), every
# stored configuration of the library's kernels tried on the GPU through both backends and on
# the CPU (scripts/trial_entries.py, shipped databases), and the first call's time with and
# without the trial (scripts/first_call.py, each in a process of its own; part first-xeon: the
# CPU's alone, FIRST_TURNS turns). Run from the
# repository root after the prelude; into $OUT/trial/:
#   bash results/h100/trial/run.sh
set -u
W=${OUT:-/tmp}/trial
mkdir -p "$W"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=/tmp/trial-data CUDA_VISIBLE_DEVICES=0
head="# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); $(lscpu | grep 'Model name' | sed 's/ *Model name: *//'); at commit ${COMMIT:-?}"
quiet() { grep -v "CompilerWarning\|_prg.build\|warnings generated"; }
for part in ${PARTS:-tests entries first}; do
  case $part in
    tests) OUT=$W/tests bash scripts/gpu_call_bench.sh tests > /dev/null 2>&1
           { echo "$head; $(date -u +%FT%TZ): bash scripts/gpu_call_bench.sh tests"
             cat "$W/tests/tests.log"; } > "$W/tests.txt"
           rm -rf "$W/tests"; tail -n 2 "$W/tests.txt" ;;
    entries) for spec in "NVIDIA opencl" "NVIDIA cuda" "xeon opencl"; do
               set -- $spec
               { echo "$head; $(date -u +%FT%TZ): python3 scripts/trial_entries.py $1 $2"
                 timeout 240 python3 scripts/trial_entries.py "$1" "$2" 2>&1 | quiet
               } > "$W/entries-$1-$2.txt"
               tail -n 1 "$W/entries-$1-$2.txt"
             done ;;
    first|first-xeon)
           gpu=$([ "$part" = first ] && echo yes)
           { echo "$head; $(date -u +%FT%TZ): python3 scripts/first_call.py DEVICE BACKEND SHAPE [--no-trial], each in a process of its own, in turns"
             for turn in $(seq "${FIRST_TURNS:-2}"); do
               for spec in ${gpu:+"NVIDIA cuda" "NVIDIA opencl"}; do
                 for shape in 512x512x512 4096x4096x4096 4097x4097x4097; do
                   for flag in "" --no-trial; do
                     timeout 60 python3 scripts/first_call.py $spec $shape $flag 2>&1 | quiet
                   done
                 done
               done
               for shape in 1024x1024x1024 1000x1000x1000; do
                 for flag in "" --no-trial; do
                   timeout 60 python3 scripts/first_call.py xeon opencl $shape $flag 2>&1 | quiet
                 done
               done
             done; } > "$W/$part.txt"
           tail -n 4 "$W/$part.txt" ;;
  esac
done
