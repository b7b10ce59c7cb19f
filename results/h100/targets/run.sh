#!/usr/bin/env bash
# gemm()'s call against the GPU targets of "Every call at the cost of one launch", at one commit:
# `clgemm bench --call --c-given` on device arrays for each SET of STEPS (small, stacks, classes,
# default: the bench's own GPU set) on both backends, OpenCL with CLBlast tuned beside it, each
# under its time limit; then `scripts/call_targets.py` over them. From the repository root after
# the prelude; into $OUT/targets.tgz, packed again after each run:
#   bash results/h100/targets/run.sh "STEPS"     e.g. "small stacks classes default"
set -u
steps=$1
W=${OUT:-/tmp}/targets
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf targets.tgz.part targets && mv targets.tgz.part targets.tgz); }
declare -A limit=([small]=60 [stacks]=90 [classes]=180 [default]=180)
for set in $steps; do
  sizes="--sizes $set"
  [ "$set" = default ] && sizes=""
  bash scripts/logged_run.sh "$W/$set-cuda.txt" "${limit[$set]}" python3 -m clgemm bench --call \
    --device H100 --backend cuda $sizes --c-given --json "$W/$set-cuda.json"
  bash scripts/logged_run.sh "$W/$set-opencl.txt" "${limit[$set]}" python3 -m clgemm bench --call \
    --device H100 --backend opencl $sizes --c-given \
    --clblast-params results/h100/clblast-xgemm-tuned.json --json "$W/$set-opencl.json"
  pack
done
python3 scripts/call_targets.py "$W" > "$W/targets.md" 2>&1
pack
rm -rf "$W"
