#!/usr/bin/env bash
# On the GPU machine: the CUDA classes before and after the 512-cubed entry (one turn; old: the
# package of $OLD_COMMIT in ./abold), then its 16-core Xeon through PoCL 5.0 (a device nobody
# tuned: its family's tuning, the 2-core Intel Xeon's shipped database): the stack tests and
# verify's quick sweep of the direct and tiled kernels with their stacked forms, gemm() on
# NumPy arrays at 1024-4096 cubed and on the stacks with C given. Into $OUT/x16.tgz:
#   bash results/xeon/stacks-16core/run.sh
set -u
W=${OUT:-/tmp}/x16
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
TURN_TIMEOUT=90 bash scripts/turns.sh "$W" 1 classes-cuda="--device H100 --backend cuda --sizes classes --c-given"
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 150 \
  "-q -rs --durations=8 tests/test_gemm_stacks.py tests/test_tuner_stacks.py"
head="# Intel(R) Xeon(R) Processor, $(nproc) cores, PoCL 5.0 (the GPU machine's CPU; its family's tuning); at commit ${COMMIT:-?}"
run() {  # NAME SECONDS ARGS...
  local name=$1 seconds=$2; shift 2
  { echo "$head; $(date -u +%FT%TZ): python3 -m clgemm $*"
    timeout "$seconds" python3 -m clgemm "$@" 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$W/$name.txt"
  tail -3 "$W/$name.txt" | head -2
}
run verify-xeon 90 verify --device xeon --rungs direct,tiled --quick
run call-xeon 150 bench --call --device xeon --arrays numpy --sizes 1024,2048,4096 --json "$W/call-xeon.json"
run stacks-xeon 90 bench --call --device xeon --arrays numpy --sizes stacks --c-given --json "$W/stacks-xeon.json"
cd "$(dirname "$W")" && tar czf x16.tgz x16 && rm -rf x16
