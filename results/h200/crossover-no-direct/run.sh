#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root, with the old package
# unpacked in .cmp/old (git archive OLD clgemm | tar x -C .cmp/old): for each backend, the
# tiled kernel alone tuned at 512 cubed for 12 s from an empty database with no shipped one
# read (this tree), then gemm()'s calls at 64-1024 cubed on that database, old tree and this
# one in turns (bench --call --sizes small, C given); into $OUT/crossover.
#   bash results/h200/crossover-no-direct/run.sh ROUNDS
set -u
rounds=${1:-2}
W=$OUT/crossover; mkdir -p "$W"
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); new ${NEW:-?}, old ${OLD:-?}"
for be in cuda opencl; do
  export CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=/tmp/crossover/$be XDG_DATA_HOME=/tmp/crossover/data-$be
  mkdir -p "$CLGEMM_RESULTS"
  { echo "$head; $(date -u +%FT%TZ)"
    timeout 120 python3 -m clgemm tune --device NVIDIA --backend "$be" --rungs tiled \
      --shapes 512x512x512 --time 12 -j 16 2>&1 | grep -v "CompilerWarning\|_prg.build\|evaluated,"
  } > "$W/tune-$be.txt" 2>&1
  cp "$CLGEMM_RESULTS"/*.json "$W/db-$be.json"
  for r in $(seq "$rounds"); do
    for tree in old new; do
      root=$PWD; [ $tree = old ] && root=$PWD/.cmp/old
      ( cd "$root" && { echo "$head; $tree tree; $(date -u +%FT%TZ)"
        PYTHONPATH=$root:/tmp/site timeout 100 python3 -m clgemm bench --call --device NVIDIA \
          --backend "$be" --sizes small --c-given --json "$W/small-$be-$r-$tree.json" 2>&1 \
          | grep -v "CompilerWarning\|_prg.build"; } > "$W/small-$be-$r-$tree.txt" )
    done
  done
done
(cd "$OUT" && tar czf crossover.tgz crossover && rm -rf crossover)
