#!/usr/bin/env bash
# The tiled kernel's search at 4096 cubed on a GPU nothing was tuned for (16 builders, no
# shipped database, an empty results folder), with the package at OLD (a folder holding an
# older `clgemm`) and with this checkout's, in turns: whether measuring a seed's helpful
# variants together finds faster tiles in the same time. Without TIME the search is the plain
# tune's step (its 45 s, the model's seeds measured first); TIME=45 gives it 45 s without them.
# From the repository root after the prelude; into $OUT/:
#   OLD=.whl/abold19 [TIME=45] bash results/h200/combined-variants/run.sh BACKEND [TURNS]
set -u
be=$1 turns=${2:-1}
timed=${TIME:+--time $TIME}
tag=${TIME:+timed}
tag=${tag:-plain}
W=${OUT:-/tmp}/combined-variants
mkdir -p "$W"
here=$PWD
one() {  # NAME FOLDER: one search with the package found first in FOLDER
  local name=$1 folder=$2 T
  T=$(mktemp -d)
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader);" \
      "$name package; at commit ${COMMIT:-?}; $(date -u +%FT%TZ):" \
      "clgemm tune --device NVIDIA --backend $be --rungs tiled --size 4096 $timed -j 16"
    (cd "$folder" && CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T XDG_DATA_HOME=$T \
      PYTHONPATH=$here/$folder:$PYTHONPATH timeout 240 python3 -m clgemm tune --device NVIDIA \
      --backend "$be" --rungs tiled --size 4096 $timed -j 16 2>&1 \
      | grep -v "CompilerWarning\|_prg.build" | tail -n 12); } >> "$W/tune-$be-$tag.txt"
  cp "$T"/journals/*/rung12-4096x4096x4096.jsonl "$W/journal-$be-$tag-$name-$3.jsonl" 2>/dev/null
  rm -rf "$T"
}
for turn in $(seq "$turns"); do
  one old "$OLD" "$turn"
  one new . "$turn"
done
