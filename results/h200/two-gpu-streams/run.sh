#!/usr/bin/env bash
# On a two-GPU machine, after the prelude, from the repository root, with the package before
# the change in .cmp/old (git archive OLD clgemm | tar x -C .cmp/old): the CUDA path's tests of
# calls on the second GPU made while the first is current, this tree's tests run against the
# old package and against this tree's; then the stream tests of the call on every device.
# Into $OUT/two-gpu-streams.
set -u
W=$OUT/two-gpu-streams; mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader | paste -sd';'); $(date -u +%FT%TZ); new ${NEW:-?}, old ${OLD:-?}"
cp -r tests setup.cfg .cmp/old/
for tree in old new; do
  root=$PWD; [ $tree = old ] && root=$PWD/.cmp/old
  ( cd "$root" && { echo "$head; $tree package: $(python3 -c 'import clgemm; print(clgemm.__file__)')"
    echo "python3 -m pytest -p no:cacheprovider tests/test_cuda_gemm.py -k 'kept_buffers_follow or several_gpus' -rA"
    timeout 200 python3 -m pytest -p no:cacheprovider tests/test_cuda_gemm.py \
      -k "kept_buffers_follow or several_gpus" -rA 2>&1 | tail -25; } > "$W/two-gpus-$tree.txt" )
done
{ echo "$head; new package"; echo "python3 -m pytest -p no:cacheprovider tests/test_gemm_queues.py -k stream"
  timeout 250 python3 -m pytest -p no:cacheprovider tests/test_gemm_queues.py -k stream 2>&1 | tail -5
} > "$W/streams-new.txt"
(cd "$OUT" && tar czf two-gpu-streams.tgz two-gpu-streams && rm -rf two-gpu-streams)
