#!/usr/bin/env bash
# On the GPU machine, after its prelude, from the repository root with ./xeon-retune holding the
# Xeon's tuning of ../ (the plain tune, then the tiled kernel tuned again at 1024 and 2048
# cubed): gemm() in turns as tuned and with the self-packing form forced, then the tiled kernel
# tuned again at both shapes over a copy of that folder, then gemm()'s call on the result.
#   . .whl/prelude.sh && bash results/xeon/self-packing/rows-first/run.sh
set -uo pipefail
out="${OUT:-/tmp/rows-first}"; mkdir -p "$out"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
head="# Intel(R) Xeon(R) Processor, 16 cores, PoCL 5.0 (cpu-skylake-avx512), the host CPU of the nvidia-h200 device machine, pyopencl $(python3 -c 'import pyopencl; print(pyopencl.VERSION_TEXT)'), $(date -u +%Y-%m-%dT%H:%MZ), at commit $commit"
for n in 1024 2048; do
  { echo "$head: CLGEMM_RESULTS=\$PWD/xeon-retune python3 scripts/self_packing_turns.py xeon $n 9 128,128,8 128,64,8 128,128,4"
    CLGEMM_RESULTS="$PWD/xeon-retune" timeout 60 python3 scripts/self_packing_turns.py xeon "$n" 9 \
      128,128,8 128,64,8 128,128,4 2>&1 | grep -v -i "warn\|lambda"; } > "$out/turns-$n.txt"
done
rm -rf xeon-again && cp -r xeon-retune xeon-again
{
  echo "$head: CLGEMM_RESULTS=\$PWD/xeon-again python3 -m clgemm tune --device xeon --rungs tiled --shapes 1024,2048 --time 90 --fresh (xeon-again: a copy of ../'s tuning)"
  CLGEMM_RESULTS="$PWD/xeon-again" timeout 230 python3 -m clgemm tune --device xeon --rungs tiled \
    --shapes 1024,2048 --time 90 --fresh 2>&1 | grep -v "^rung 12: [0-9]*/"
} > "$out/tune.log"
{
  echo "$head, after that tune: CLGEMM_RESULTS=\$PWD/xeon-again python3 scripts/cpu_call_timeline.py xeon 9 1024 2048"
  CLGEMM_RESULTS="$PWD/xeon-again" timeout 40 python3 scripts/cpu_call_timeline.py xeon 9 1024 2048 2>&1 \
    | grep -v -i "warn\|lambda"
} > "$out/timeline.txt"
gzip -c xeon-again/opencl-genuineintel-*.json > "$out/database.json.gz"
{
  echo "$head, after that tune: CLGEMM_RESULTS=\$PWD/xeon-again python3 -m clgemm bench --call --device xeon --sizes 1024,2048,4096 --json call.json"
  CLGEMM_RESULTS="$PWD/xeon-again" timeout 120 python3 -m clgemm bench --call --device xeon \
    --sizes 1024,2048,4096 --json "$out/call.json" 2>&1
} > "$out/call.txt"
