#!/usr/bin/env bash
# `clgemm bench --call` as a user runs it, its own set of shapes: the H200 on both backends
# (device arrays; CLBlast also with the parameters its own tuner found on an H100, the same
# chip) and the host's Xeon through PoCL (NumPy arrays). Into $OUT/bench-call-h200/, packed into
# $OUT/bench-call-h200.tgz; the JSON files go to results/h200/ and results/xeon/. WHICH names
# the runs (default "cuda opencl xeon"). From the repository root after the prelude:
#   bash results/h200/bench-call.sh
set -u
W=${OUT:-/tmp}/bench-call-h200
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
which=" ${WHICH:-cuda opencl xeon} "
[[ $which == *" cuda "* ]] && bash scripts/logged_run.sh "$W/bench-call-cuda.txt" 150 \
  python3 -m clgemm bench --call --device H200 --backend cuda --json "$W/bench-call-cuda.json"
[[ $which == *" opencl "* ]] && bash scripts/logged_run.sh "$W/bench-call-opencl.txt" 150 \
  python3 -m clgemm bench --call --device H200 --backend opencl \
  --clblast-params results/h100/clblast-xgemm-tuned.json --json "$W/bench-call-opencl.json"
[[ $which == *" xeon "* ]] && bash scripts/logged_run.sh "$W/bench-call-xeon.txt" 200 \
  python3 -m clgemm bench --call --device xeon --arrays numpy --json "$W/bench-call-xeon.json"
(cd "$(dirname "$W")" && tar czf bench-call-h200.tgz bench-call-h200)
