#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: pytest with ARGS on one of
# its devices (CLGEMM_TEST_DEVICE=DEVICE: H100 or xeon), under SECONDS, leaving out only the
# skinny kernel's tests on the Xeon (PoCL 5.0 miscompiles them: results/xeon/skinny-pocl5.txt),
# into FILE headed by the GPU, the date, $COMMIT and the command; lines matching $DROP (a grep
# pattern) left out; its last line printed. A selection by keyword goes in $K, which is joined
# with the Xeon's exclusion (pytest heeds only the last -k it is given, so ARGS may hold none):
#   [K="EXPRESSION"] bash scripts/device_tests.sh FILE DEVICE SECONDS "PYTEST ARGS"
set -u
file=$1 dev=$2 seconds=$3 args=$4
case " $args " in
  *" -k"*) echo "device_tests.sh: give the keyword selection in K, not as -k in ARGS" >&2; exit 2 ;;
esac
keep="not (test_skinny and opencl:1)"
[ -n "${K:-}" ] && keep="($K) and $keep"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader) and the machine's CPU through PoCL 5.0; $(date -u +%FT%TZ); at commit ${COMMIT:-?}"
cmd="python3 -m pytest $args -k '$keep'"
drop() { if [ -n "${DROP:-}" ]; then grep -v "$DROP"; else cat; fi; }
{ echo "$head: CLGEMM_TEST_DEVICE=$dev $cmd"
  eval "CLGEMM_TEST_DEVICE=$dev timeout $seconds $cmd" 2>&1 | drop; } > "$file"
tail -1 "$file"
