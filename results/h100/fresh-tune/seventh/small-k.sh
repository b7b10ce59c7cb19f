#!/usr/bin/env bash
# On a two-GPU machine, with the databases of `seventh/`'s plain tunes (in DBS, their .json
# files) and clgemm as it was at those tunes (in OLD, a tree holding its clgemm/): the tiled
# kernel tuned at 2048x2048x64 besides (17 s, the plan's new step), then gemm()'s calls on the
# classes (C given, device arrays) three ways, each backend on its own GPU, both at once:
#   asis     the plain tune's database, clgemm as it was (what `seventh/` measured)
#   weighed  the plain tune's database, a pipeline weighed with its pack of B
#   stepped  the database with the new step, a pipeline weighed with its pack
# Into $OUT/small-k/. From the repository root after the prelude:
#   DBS=.whl/s7db OLD=.whl/old bash results/h100/fresh-tune/seventh/small-k.sh
set -u
T=/tmp/small-k W=${OUT:-/tmp}/small-k
mkdir -p "$W"
export PYTHONUNBUFFERED=1
declare -A gpu=([opencl]=0 [cuda]=1)
[ "$(nvidia-smi -L | wc -l)" -ge 2 ] || gpu[cuda]=0
one() {  # BACKEND FOLDER TREE FILE SECONDS ARGS...: clgemm of TREE with FOLDER's database alone
  local be=$1 db=$2 tree=$3 file=$4 s=$5; shift 5
  { echo "# $(nvidia-smi -i "${gpu[$be]}" --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?} (clgemm of $tree); $(date -u +%FT%TZ): python3 -m clgemm $*"
    CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$db \
      XDG_DATA_HOME=$T/data-$be PYTHONPATH=$tree:${PYTHONPATH:-} timeout "$s" python3 -m clgemm "$@" 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"; } > "$W/$file"
}
run() {
  local be=$1
  mkdir -p "$T/plain-$be" "$T/stepped-$be"
  cp "$DBS"/$be-*.json "$T/plain-$be/"; cp "$DBS"/$be-*.json "$T/stepped-$be/"
  one "$be" "$T/stepped-$be" "$PWD" "tune-$be.txt" 150 tune --device NVIDIA --backend "$be" \
    --rungs tiled --shapes 2048x2048x64 --time 17 -j 16
  gzip -n -c "$T/stepped-$be"/$be-*.json > "$W/stepped-$be.json.gz"
  for how in asis weighed stepped; do
    local db=$T/plain-$be tree=$PWD
    [ $how = asis ] && tree=$PWD/$OLD
    [ $how = stepped ] && db=$T/stepped-$be
    one "$be" "$db" "$tree" "classes-$be-$how.txt" 150 bench --call --device NVIDIA \
      --backend "$be" --sizes classes --c-given --json "$W/classes-$be-$how.json"
  done
}
for be in opencl cuda; do run "$be" & done
wait
(cd "$(dirname "$W")" && tar czf small-k.tgz small-k)
