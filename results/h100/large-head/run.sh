#!/usr/bin/env bash
# At this commit: gemm()'s call on the large products (`--sizes large`) on both backends, C
# given, device arrays, twice each in turn, for the end-to-end target against cuBLAS. From the
# repository root after the prelude; into $OUT/:
#   bash results/h100/large-head/run.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
for turn in 1 2; do
  for backend in cuda opencl; do
    bash scripts/logged_run.sh "${OUT:-/tmp}/large-$backend-$turn.txt" 150 python3 -m clgemm bench \
      --call --device H100 --backend $backend --sizes large --c-given \
      --json "${OUT:-/tmp}/large-$backend-$turn.json"
  done
done
