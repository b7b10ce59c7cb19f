#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root, with the old package in
# .cmp/old (git archive OLD clgemm | tar x -C .cmp/old): the panels' pack with squares of 8
# turned in registers against the loops it replaces, on the host's Xeon (PoCL 5.0):
# pack_panels_pair alone (both trees, squares of 8 and 16), then gemm()'s call's timeline at
# 1024 and 2048 cubed, old tree (squares of 16, its choice there) and this tree with squares of
# 8 and of 16, in turns; then, on the GPU, the tiled kernel's stored configuration forced at
# each split of K at small squares (tiled_split_sweep.py). Into $OUT/pack-turn.
#   bash results/h200/pack-turn/run.sh ROUNDS
set -u
rounds=${1:-3}
W=$OUT/pack-turn; mkdir -p "$W"
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); new ${NEW:-?}, old ${OLD:-?}; $(date -u +%FT%TZ)"
timeline() {  # SUB (empty: the tree's own choice)
  if [ -n "$1" ]; then
    python3 -c "import sys, runpy; sys.argv = ['cpu_call_timeline.py', 'xeon', '9', '1024', '2048']
import clgemm.library.program as p; p.pack_square = lambda device: $1
runpy.run_path('scripts/cpu_call_timeline.py', run_name='__main__')"
  else
    python3 scripts/cpu_call_timeline.py xeon 9 1024 2048
  fi
}
for tree in old new; do
  root=$PWD; [ $tree = old ] && root=$PWD/.cmp/old
  { echo "$head; $tree tree"
    PYTHONPATH=$root:$PYTHONPATH timeout 120 python3 scripts/pack_sub_sweep.py xeon 1024 "$rounds" 8 16
  } > "$W/pack-$tree.txt" 2>&1
done
for r in $(seq "$rounds"); do
  for run in old new-8 new-16; do
    root=$PWD; sub=; [ $run = old ] && root=$PWD/.cmp/old
    [ $run = new-8 ] && sub=8; [ $run = new-16 ] && sub=16
    { echo "$head; $run; round $r"
      PYTHONPATH=$root:$PYTHONPATH timeout 120 bash -c "$(declare -f timeline); timeline $sub" 2>&1 \
        | grep -v "CompilerWarning\|_prg.build"
    } > "$W/timeline-$run-$r.txt"
  done
done
for be in cuda opencl; do
  { echo "$head"
    timeout 200 python3 scripts/tiled_split_sweep.py H200 $be \
      --shapes 384x384x384,512x512x512,640x640x640,768x768x768 2>&1 | grep -v "CompilerWarning\|_prg.build"
  } > "$W/split-$be.txt"
done
(cd "$OUT" && tar czf pack-turn.tgz pack-turn && rm -rf pack-turn)
