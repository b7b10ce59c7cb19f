#!/usr/bin/env bash
# The plan's steps for the kernel for any size moved to 4097 and 1000 cubed, tried on this
# directory's plain tune: its database with the entries of the kernel for any size (those of
# the old steps, at 4096 and 1024 cubed) taken out, then those two steps as the plan now runs
# them (`clgemm tune --rungs tiled-any --size S --time T`, the plan's seconds), then gemm() on
# the large products with the plain tune's database as it was and as so changed, OpenCL, and
# the CUDA path with the shipped databases for cuBLAS's times on the same GPU, large products
# and the classes. Last, the library path's GPU tests of splits and padding on the CUDA path.
# From the repository root after the prelude; into $OUT/steps.tgz (one archive: the device
# machine sends back only so many files, and the run at 8a8a567 lost its logs of the tunes and
# the tests to that):
#   bash results/h100/fresh-tune/fourth/steps.sh
set -u
here=results/h100/fresh-tune/fourth
W=${OUT:-/tmp}/steps T=/tmp/steps
mkdir -p "$W" "$T/asis" "$T/stepped"
export PYTHONUNBUFFERED=1 XDG_DATA_HOME=$T/data CLGEMM_SHIPPED_TUNING=0
db=opencl-nvidia-corporation-nvidia-h100-80gb-hbm3-580.159.04.json
gunzip -c "$here/$db.gz" > "$T/asis/$db"
python3 - "$T/asis/$db" "$T/stepped/$db" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["entries"] = [e for e in d["entries"] if e["rung"] != 13]
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
log() { bash scripts/logged_run.sh "$@"; }
for s in "4097 40" "1000 30"; do
  set -- $s
  CLGEMM_RESULTS=$T/stepped log "$W/tune-any-$1.txt" 120 python3 -m clgemm tune --device NVIDIA \
    --backend opencl -j 16 --rungs tiled-any --size "$1" --time "$2"
done
cp "$T/stepped/$db" "$W/stepped-$db"
for tuning in asis stepped; do
  CLGEMM_RESULTS=$T/$tuning log "$W/large-opencl-$tuning.txt" 150 python3 -m clgemm bench --call \
    --device NVIDIA --backend opencl --sizes large --c-given --json "$W/large-opencl-$tuning.json"
done
for set in large classes; do
  CLGEMM_SHIPPED_TUNING=1 log "$W/$set-cuda-shipped.txt" 150 python3 -m clgemm bench --call \
    --device NVIDIA --backend cuda --sizes $set --c-given --json "$W/$set-cuda-shipped.json"
done
CLGEMM_SHIPPED_TUNING=1 log "$W/tests-cuda.txt" 120 env CLGEMM_TEST_DEVICE=NVIDIA \
  CLGEMM_TEST_BACKEND=cuda python3 -m pytest -m "cuda or not cuda" -q -x -rs \
  -k "split or pad or panel or repeat or scratch" tests/test_gemm_api.py \
  tests/test_gemm_repeated.py tests/test_rungs_upper.py
(cd "$T/stepped" && tar czf "$W/journals-stepped.tgz" journals)
(cd "$(dirname "$W")" && tar czf steps.tgz steps && rm -rf steps)
