#!/usr/bin/env bash
# On the H100, with the tree as committed at $COMMIT: the library's call tests (strided views,
# offsets, transposes, aliased operands, out-of-order queues, stacks, the CUDA path) with the
# H100 as the test device and verify's quick sweep on both backends; then, in TURNS, `bench
# --call` at 512, 768 and 1024 cubed with this tree (old) and with a copy whose tiled kernel
# splits K from K = 512 instead of 2048 (new); the kernels alone against cuBLAS at 4096 and 8192
# cubed; what each technique of the stored configuration adds at 4096 cubed on both backends,
# in ROUNDS rounds. From the repository root after the prelude; into $OUT/split-mid.tgz, packed
# again after each step so that a run cut short keeps what it did:
#   bash results/h100/split-mid/run.sh "TURNS" ROUNDS
set -u
turns=$1 rounds=$2
W=${OUT:-/tmp}/split-mid
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf split-mid.tgz.part split-mid && mv split-mid.tgz.part split-mid.tgz); }
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 150 "-q -p no:cacheprovider tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_cuda_gemm.py tests/test_gemm_stacks.py"
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/verify-$be.txt" 60 python3 -m clgemm verify --device H100 --backend $be --quick
done
pack
# the copy: the tiled kernel's split threshold lowered, nothing else changed
T=/tmp/split-from-512
rm -rf "$T" && mkdir -p "$T/abold" && cp -r clgemm scripts "$T/" && cp -r clgemm "$T/abold/"
mkdir -p "$T/results/h100" "$T/abold/results/h100" && cp results/h100/clblast-xgemm-tuned.json "$T/results/h100/"
python3 - "$T/clgemm/configs/splits.py" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = "if params.get(\"PANELS\") or k < SPLIT_FROM_K or"
assert text.count(old) == 1, "the tiled kernel's threshold line moved"
open(path, "w").write(text.replace(old, "if params.get(\"PANELS\") or k < 512 or"))
PY
(cd "$T" && HEAD="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); new: ${COMMIT:-?} with tiled_slices splitting K from 512" \
  OLD_COMMIT=${COMMIT:-?} TURN_TIMEOUT=90 bash scripts/turns.sh "$W/turns" "$turns" \
  "mid-cuda=--device H100 --backend cuda --sizes 512,768,1024 --c-given" \
  "mid-opencl=--device H100 --backend opencl --sizes 512,768,1024 --c-given")
pack
for be in cuda opencl; do
  bash scripts/logged_run.sh "$W/kernel-$be.txt" 90 python3 -m clgemm bench --device H100 --backend $be --sizes 4096,8192 --rungs tiled
  pack
done
for be in opencl cuda; do
  bash scripts/logged_run.sh "$W/ablation-h100-$be.txt" 120 python3 scripts/technique_ablation.py H100 $be "$rounds" 4096
  pack
done
rm -rf "$W"
