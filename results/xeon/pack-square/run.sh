#!/usr/bin/env bash
# The panels' pack in squares of the CPU's vector (PACK_SUB = 16 on AVX-512, 8 on AVX2) on the
# GPU machine's 16-core Xeon through PoCL 5.0, one loan: the pack alone over its squares and
# runs (scripts/pack_square_sweep.py) at 1024 and 2048 cubed with the panels of the Xeon's
# chosen configurations there; the call tests (tests/test_gemm_*.py) on the Xeon; then
# `bench --call --arrays numpy` at 1024 and 2048 cubed in turns, the package of $OLD_COMMIT in
# ./abold (old) against this tree (new). Into $OUT/pack-square/ (packed into
# $OUT/pack-square.tgz). From the repository root after the prelude:
#   bash results/xeon/pack-square/run.sh "1 2 3"
set -u
turns=$1
W=${OUT:-/tmp}/pack-square
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
cpu=$(python3 -m clgemm devices 2>/dev/null | grep -o "cpu-[a-z0-9-]*Intel[^ ]*" | head -1)
head="# Intel(R) Xeon(R) Processor, 16 cores, PoCL 5.0 ($cpu), the host of an $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for spec in "1024 16 16 3" "2048 16 32 2"; do
  set -- $spec
  { echo "$head; $(date -u +%FT%TZ): python3 scripts/pack_square_sweep.py xeon $spec"
    timeout 120 python3 scripts/pack_square_sweep.py xeon $spec 2>&1 | grep -v "CompilerWarning\|_prg.build"
  } > "$W/sweep-$1.txt"
done
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 200 \
  "-q -p no:cacheprovider $(ls tests/test_gemm_*.py | tr '\n' ' ')"
HEAD="$head" TURN_TIMEOUT=150 bash scripts/turns.sh "$W/turns" "$turns" \
  call="--device xeon --arrays numpy --sizes 1024,2048"
(cd "$(dirname "$W")" && tar czf pack-square.tgz pack-square)
