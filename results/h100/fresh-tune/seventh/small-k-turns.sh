#!/usr/bin/env bash
# gemm()'s calls on the classes (C given, device arrays) with `small-k/`'s databases, one
# backend and one database at a time on one GPU, in two turns: `asis` the plain tune's database
# with clgemm as it was at the tunes (tree OLD), `stepped` the database with the tiled kernel's
# step at 2048x2048x64 with clgemm at this commit. Nothing else runs on the host meanwhile
# (`small-k/` ran both backends at once, whose small calls shared the host's CPU).
#   PLAIN=.whl/plain STEPPED=.whl/stepped OLD=.whl/old bash results/h100/fresh-tune/seventh/small-k-turns.sh
# PLAIN and STEPPED hold a folder per backend with its database. Into $OUT/small-k-turns/.
set -u
W=${OUT:-/tmp}/small-k-turns
mkdir -p "$W"
for turn in 1 2; do
  for be in opencl cuda; do
    for how in asis stepped; do
      db=$PWD/$STEPPED/$be tree=$PWD
      [ $how = asis ] && db=$PWD/$PLAIN/$be tree=$PWD/$OLD
      f="$W/classes-$be-$how-$turn"
      { echo "# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?} (clgemm of $tree); $(date -u +%FT%TZ): python3 -m clgemm bench --call --device NVIDIA --backend $be --sizes classes --c-given"
        CUDA_VISIBLE_DEVICES=0 CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$db XDG_DATA_HOME=/tmp/turns-data \
          PYTHONPATH=$tree:${PYTHONPATH:-} timeout 150 python3 -m clgemm bench --call --device NVIDIA \
          --backend "$be" --sizes classes --c-given --json "$f.json" 2>&1 \
          | grep -v "CompilerWarning\|_prg.build"; } > "$f.txt"
      (cd "$(dirname "$W")" && tar czf small-k-turns.tgz small-k-turns)
    done
  done
done
