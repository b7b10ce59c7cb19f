#!/usr/bin/env bash
# `clgemm bench --call` runs in turns on one loan: for each turn in TURNS, the package of
# $OLD_COMMIT unpacked into ./abold (old) and then this tree (new), each STEM=ARGS in order,
# into DIR/STEM-TURN-old|new.json with the run's output beside it (.txt), headed by $HEAD (the
# device and commit) and its command. Run from the repository root after the prelude:
#   bash scripts/turns.sh DIR "TURNS" STEM="BENCH ARGS" [STEM="BENCH ARGS" ...]
set -u
dir_out=$1 turns=$2
shift 2
mkdir -p "$dir_out"
root=$PWD
export XDG_DATA_HOME=${XDG_DATA_HOME:-/tmp/clgemm-data} PYTHONUNBUFFERED=1
head=${HEAD:-"# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"}
for turn in $turns; do
  for v in old new; do
    dir=$root; what="this tree"
    [ $v = old ] && dir=$root/abold && what="package of ${OLD_COMMIT:-?}"
    for spec in "$@"; do
      name=${spec%%=*}-$turn-$v
      cmd="python3 -m clgemm bench --call ${spec#*=} --json $dir_out/$name.json"
      { echo "$head ($v: $what); $(date -u +%FT%TZ): $cmd"
        (cd "$dir" && PYTHONPATH=$dir:${PYTHONPATH:-} timeout "${TURN_TIMEOUT:-100}" $cmd 2>&1 \
           | grep -v "CompilerWarning\|_prg.build"); } > "$dir_out/$name.txt"
      echo "turn $turn $v ${spec%%=*}: $(grep 'geo-mean' "$dir_out/$name.txt")"
    done
  done
done
