#!/usr/bin/env bash
# The skinny classes at 32 rows or columns of C, on this directory's plain tunes: each
# backend's database as the tune left it (`asis`); with the tiled kernel tuned besides at
# 32 x 4096 x 4096 and 4096 x 32 x 4096 in the kernels' terms (`stepped`: `clgemm tune --rungs
# tiled --mnk ... --time 17`, a plan step's seconds); and `stepped` without the entries of
# three of today's plan steps, the tiled kernel at 64 rows and at 64 columns and the skinny
# kernel at 32 columns (`lean`: what a plan of the same length would give with the new steps in
# their place). Then gemm() on the classes with each, one backend after the other, on one GPU.
# On a GPU other than the H200 the tunes ran on, the databases are read as that GPU's (the
# device named in each file is rewritten, and the log says so). From the repository root after
# the prelude; into $OUT/steps.tgz, packed after each part:
#   bash results/h100/fresh-tune/sixth/steps.sh
set -u
here=results/h100/fresh-tune/sixth
W=${OUT:-/tmp}/steps T=/tmp/steps
mkdir -p "$W"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=$T/data CLGEMM_SHIPPED_TUNING=0 PYTHONPATH=$PWD:${PYTHONPATH:-}
pack() { (cd "$(dirname "$W")" && tar czf steps.tgz.part steps && mv steps.tgz.part steps.tgz); }
log() { bash scripts/logged_run.sh "$@"; }
for be in opencl cuda; do
  mkdir -p "$T/$be/asis" "$T/$be/stepped" "$T/$be/lean"
  python3 - "$be" "$here" "$T/$be" > "$W/databases-$be.txt" <<'PY'
import glob, gzip, json, sys
from clgemm.backends import list_devices
be, here, out = sys.argv[1:]
key = next(d.key for d in list_devices() if d.backend == be and "NVIDIA" in d.name)
[src] = glob.glob(f"{here}/{be}-*.json.gz")
db = json.load(gzip.open(src))
print(f"{src}: tuned on {db['device']}; read here as {key}")
db["device"] = key
json.dump(db, open(f"{out}/asis/{key}.json", "w"), indent=1)
json.dump(db, open(f"{out}/stepped/{key}.json", "w"), indent=1)
PY
  for mnk in "32 4096 4096" "4096 32 4096"; do
    CLGEMM_RESULTS=$T/$be/stepped log "$W/tune-$be-${mnk// /x}.txt" 90 python3 -m clgemm tune \
      --device NVIDIA --backend "$be" -j 16 --rungs tiled --mnk $mnk --time 17
  done
  python3 - "$T/$be/stepped" "$T/$be/lean" >> "$W/databases-$be.txt" <<'PY'
import glob, json, os, sys
drop = {(12, (64, 4096, 4096)), (12, (4096, 64, 4096)), (14, (4096, 32, 4096))}
[src] = glob.glob(f"{sys.argv[1]}/*.json")
db = json.load(open(src))
keep = [e for e in db["entries"] if (e["rung"], tuple(e["shape"])) not in drop]
print(f"lean: {len(db['entries']) - len(keep)} entries of {len(db['entries'])} taken out")
db["entries"] = keep
json.dump(db, open(os.path.join(sys.argv[2], os.path.basename(src)), "w"), indent=1)
PY
  cp "$T/$be/stepped/"*.json "$W/stepped-$be.json"
  pack
  ref=""
  [ "$be" = opencl ] && ref="--clblast-params results/h100/clblast-xgemm-tuned.json"
  for tuning in asis stepped lean; do
    CLGEMM_RESULTS=$T/$be/$tuning log "$W/classes-$be-$tuning.txt" 100 python3 -m clgemm bench \
      --call --device NVIDIA --backend "$be" --sizes classes --c-given $ref \
      --json "$W/classes-$be-$tuning.json"
    pack
  done
done
pack
