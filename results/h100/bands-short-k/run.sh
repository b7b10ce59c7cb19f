#!/usr/bin/env bash
# The CUDA path's kernel for any size as its 1000-cubed entry has it, with its tiles in bands of
# 8 (RASTER=8, the entry) and in rows (RASTER=0), each measured by the tuner as gemm() builds it
# at SHAPES (the kernel's M x N x K), into a scratch database and journals; every configuration
# measured, nothing stored in the shipped databases. From the repository root after the
# prelude; into $OUT/bands-short-k.tgz:
#   bash results/h100/bands-short-k/run.sh SHAPES
set -u
shapes=$1
W=${OUT:-/tmp}/bands-short-k
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CLGEMM_RESULTS=$W/results
pin="--only TSM=64 --only TSN=64 --only TSK=32 --only WPTM=4 --only WPTN=8 --only WIDTH=4"
pin="$pin --only VWM=2 --only VWN=8 --only CACHE_A=1 --only CACHE_B=1 --only PIPELINE=2"
pin="$pin --only UNROLL_K=1 --only RASTER=0,8"
bash scripts/logged_run.sh "$W/tune.txt" 400 python3 -m clgemm tune --device H100 --backend cuda \
  --rungs tiled-any --shapes "$shapes" $pin --exhaustive --fresh --database "$W/scratch.json"
python3 - "$W" > "$W/bands.md" <<'PY'
import json, pathlib, sys
rows = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("results/journals/*/rung13-*.jsonl")):
    for line in path.read_text().splitlines()[1:]:
        r = json.loads(line)
        times = r.get("times_ms") or []
        spread = f"{min(times) * 1e3:.1f}-{max(times) * 1e3:.1f}" if times else ""
        rows.append((path.stem.split("-", 1)[1], r.get("kind"), r.get("config", {}).get("RASTER"),
                     r.get("status"), r.get("ms"), spread))
print("| shape (the kernel's M x N x K) | kind | RASTER | status | µs (median) | µs (spread) |")
print("|---|---|---|---|---|---|")
for shape, kind, raster, status, ms, spread in rows:
    print(f"| {shape} | {kind} | {raster} | {status} | {'' if ms is None else f'{ms * 1e3:.1f}'} | {spread} |")
PY
(cd "$(dirname "$W")" && tar czf bands-short-k.tgz bands-short-k)
rm -rf "$W"
