#!/usr/bin/env bash
# This machine kind's two cores (PoCL 3.1): where a call on NumPy arrays spends its time
# (scripts/cpu_call_timeline.py, ROUNDS calls each at 1024-4096 cubed, C given) in TURNS with
# the package of $OLD_COMMIT unpacked in ./abold (old) and this tree (new), nothing else
# running; into results/pocl/host-hot/timeline-TURN-old|new.txt:
#   bash results/pocl/host-hot/run.sh "TURNS" ROUNDS
set -u
turns=$1 rounds=$2
out=results/pocl/host-hot
py=${PYTHON:-.venv/bin/python}
for turn in $turns; do
  for v in old new; do
    dir=$PWD; [ $v = old ] && dir=$PWD/abold
    { echo "# $(nproc) cores, $($py -c 'import pyopencl, numpy; print("pyopencl", pyopencl.VERSION_TEXT, "NumPy", numpy.__version__)'); at commit ${COMMIT:-?} ($v: $([ $v = old ] && echo "package of ${OLD_COMMIT:-?}" || echo "this tree")); $(date -u +%FT%TZ): python scripts/cpu_call_timeline.py 0 $rounds 1024 2048 4096"
      PYTHONPATH=$dir timeout 300 $py scripts/cpu_call_timeline.py 0 "$rounds" 1024 2048 4096 2>&1 \
        | grep -v "CompilerWarning\|_prg.build"; } > "$out/timeline-$turn-$v.txt"
    tail -n 3 "$out/timeline-$turn-$v.txt"
  done
done
