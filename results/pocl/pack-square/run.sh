#!/usr/bin/env bash
# The panels' pack in squares of the CPU's vector on this machine kind's 2-core CPU (PoCL 3.1,
# pthread-haswell: 8 floats a vector): the pack alone over its squares and runs at 1024 cubed
# (scripts/pack_square_sweep.py), then `bench --call --arrays numpy` at 1024 and 2048 cubed in
# turns, the package of $OLD_COMMIT in ./abold (old) against this tree (new), on the shipped
# databases and on the database of a plain tune of this machine kind ($PLAIN_DB, a folder:
# ../plain-tune-79483ae's database unpacked). Into DIR. From the repository root, the venv's
# python3 first on PATH:
#   bash results/pocl/pack-square/run.sh DIR "1 2 3"
set -u
W=$1 turns=$2
mkdir -p "$W"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
head="# $(python3 -c 'import pyopencl as cl; d=[d for p in cl.get_platforms() for d in p.get_devices()][0]; print(d.name, d.max_compute_units, "cores,", d.driver_version)'), this machine kind; at commit ${COMMIT:-?}"
{ echo "$head; $(date -u +%FT%TZ): python3 scripts/pack_square_sweep.py 0 1024 16 16 3"
  python3 scripts/pack_square_sweep.py 0 1024 16 16 3 2>&1 | grep -v "CompilerWarning\|_prg.build"
} > "$W/sweep-1024.txt"
HEAD="$head (shipped databases)" TURN_TIMEOUT=300 bash scripts/turns.sh "$W/turns" "$turns" \
  shipped="--device 0 --arrays numpy --sizes 1024,2048"
HEAD="$head (CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$PLAIN_DB: the plain tune's database alone)" \
  CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$PLAIN_DB TURN_TIMEOUT=300 bash scripts/turns.sh \
  "$W/turns" "$turns" plain="--device 0 --arrays numpy --sizes 1024,2048"
