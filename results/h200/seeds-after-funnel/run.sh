#!/usr/bin/env bash
# On a two-GPU machine, after the prelude, from the repository root, with the old package
# unpacked in .cmp/old (git archive OLD clgemm | tar x -C .cmp/old): the old tree on the first
# GPU and this tree on the second, at once, each from an empty database with no shipped one
# read: the tiled kernel at the plain tune's square shapes up to 768 cubed, in its order, 12 s
# each, then gemm()'s calls at 64-1024 cubed (bench --call --sizes small, C given); into
# $OUT/seeds. One backend a call:
#   bash results/h200/seeds-after-funnel/run.sh BACKEND
set -u
be=$1
shapes=4096x4096x4096,2048x2048x2048,1024x1024x1024,512x512x512,768x768x768
W=$OUT/seeds; mkdir -p "$W"
for tree in old new; do
  if [ $tree = old ]; then g=0 root=$PWD/.cmp/old; else g=1 root=$PWD; fi
  ( cd "$root" && export CUDA_VISIBLE_DEVICES=$g CLGEMM_SHIPPED_TUNING=0 \
      CLGEMM_RESULTS=/tmp/seeds/$be-$tree XDG_DATA_HOME=/tmp/seeds/data-$be-$tree \
      PYTHONPATH=$root:/tmp/site PYTHONUNBUFFERED=1
    mkdir -p "$CLGEMM_RESULTS"
    { echo "# $(nvidia-smi -i $g --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); $tree tree (new: ${NEW:-?}, old: ${OLD:-?}); $(date -u +%FT%TZ)"
      timeout 200 python3 -m clgemm tune --device NVIDIA --backend "$be" --rungs tiled \
        --shapes $shapes --time 12 -j 16 2>&1 | grep -v "CompilerWarning\|_prg.build\|evaluated,"
      timeout 100 python3 -m clgemm bench --call --device NVIDIA --backend "$be" --sizes small \
        --c-given --json "$W/small-$be-$tree.json" 2>&1 | grep -v "CompilerWarning\|_prg.build"
      cp "$CLGEMM_RESULTS"/*.json "$W/db-$be-$tree.json"
    } > "$W/run-$be-$tree.txt" 2>&1 ) &
done
wait
(cd "$OUT" && tar czf "seeds-$be.tgz" seeds && rm -rf seeds)
