#!/usr/bin/env bash
# The headline's `bench --call` (its default shapes, a new C per call, device arrays) on both H100
# backends with this tree's databases, each file headed by the GPU, the date, $COMMIT and the
# command. From the repository root after the prelude; into $OUT/headline/:
#   bash results/h100/mid-squares/run-headline.sh
set -u
F=${OUT:-/tmp}/headline
mkdir -p "$F"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
gpu=$(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader)
for b in cuda opencl; do
  ref=""; [ $b = opencl ] && ref="--clblast-params results/h100/clblast-xgemm-tuned.json"
  cmd="python3 -m clgemm bench --call --device H100 --backend $b $ref --json $F/bench-call-$b.json"
  { echo "# $gpu; $(date -u +%FT%TZ), at commit ${COMMIT:-?}: $cmd"
    timeout 80 $cmd 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$F/bench-call-$b.txt"
  tail -2 "$F/bench-call-$b.txt" | head -1
done
