#!/usr/bin/env bash
# The README's headline at this commit: `clgemm bench --call` over the bench's own set on both
# H100 backends (device arrays, a new C per call; OpenCL with CLBlast tuned beside it) and on the
# machine's 16-core Xeon through PoCL 5.0 (NumPy arrays, its family's tuning). From the
# repository root after the prelude; into $OUT/:
#   bash results/h100/headline-head/run.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
for backend in cuda opencl; do
  extra=""
  [ $backend = opencl ] && extra="--clblast-params results/h100/clblast-xgemm-tuned.json"
  bash scripts/logged_run.sh "${OUT:-/tmp}/bench-call-$backend.txt" 200 python3 -m clgemm bench \
    --call --device H100 --backend $backend $extra --json "${OUT:-/tmp}/bench-call-$backend.json"
done
bash scripts/logged_run.sh "${OUT:-/tmp}/bench-call-xeon.txt" 200 python3 -m clgemm bench --call \
  --device xeon --arrays numpy --json "${OUT:-/tmp}/bench-call-xeon.json"
