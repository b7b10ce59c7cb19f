#!/usr/bin/env bash
# On the GPU machine, after its prelude, from the repository root with ./xeon-tune holding the
# 16-core Xeon's plain tune (results/xeon/plain-tune-17d313e): the probe of a kernel that packs
# its own blocks beside gemm() on that tuning, then the tiled kernel tuned again at 1024 and
# 2048 cubed over a copy of it (the self-packing form among the seeds, a panels form's time
# counting its pack), then gemm()'s call on the result. Files go to $OUT.
#   . .whl/prelude.sh && bash results/xeon/self-packing/run.sh
set -uo pipefail
out="${OUT:-/tmp/self-packing}"; mkdir -p "$out"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
head="# Intel(R) Xeon(R) Processor, 16 cores, PoCL 5.0 (cpu-skylake-avx512), the host CPU of the nvidia-h200 device machine, pyopencl $(python3 -c 'import pyopencl; print(pyopencl.VERSION_TEXT)'), $(date -u +%Y-%m-%dT%H:%MZ), at commit $commit"
{
  echo "$head: the probe, gemm() on the plain tune of results/xeon/plain-tune-17d313e"
  for n in 1024 2048; do
    CLGEMM_RESULTS="$PWD/xeon-tune" timeout 150 python3 scripts/cpu_blocks_probe.py xeon "$n" 7 \
      16,16,8,4,256,1 16,16,16,8,256,1 16,16,8,4,256,0 2>&1 | grep -v -i "warn\|lambda"
  done
} > "$out/probe.txt"
rm -rf xeon-retune && cp -r xeon-tune xeon-retune
{
  echo "$head: CLGEMM_RESULTS=\$PWD/xeon-retune python3 -m clgemm tune --device xeon --rungs tiled --shapes 1024,2048 --time 120 --fresh (xeon-retune: a copy of that plain tune's folder)"
  CLGEMM_RESULTS="$PWD/xeon-retune" timeout 330 python3 -m clgemm tune --device xeon --rungs tiled \
    --shapes 1024,2048 --time 120 --fresh 2>&1
} > "$out/tune.log"
{
  echo "$head, after that tune: CLGEMM_RESULTS=\$PWD/xeon-retune python3 -m clgemm bench --call --device xeon --sizes 1024,2048,4096 --json call.json"
  CLGEMM_RESULTS="$PWD/xeon-retune" timeout 150 python3 -m clgemm bench --call --device xeon \
    --sizes 1024,2048,4096 --json "$out/call.json" 2>&1
} > "$out/call.txt"
{
  echo "$head, after that tune: CLGEMM_RESULTS=\$PWD/xeon-retune python3 scripts/cpu_call_timeline.py xeon 9 1024 2048"
  CLGEMM_RESULTS="$PWD/xeon-retune" timeout 90 python3 scripts/cpu_call_timeline.py xeon 9 1024 2048 2>&1 \
    | grep -v -i "warn\|lambda"
} > "$out/timeline.txt"
gzip -c xeon-retune/opencl-genuineintel-*.json > "$out/database.json.gz"
tar czf "$out/journals.tgz" xeon-retune/journals
