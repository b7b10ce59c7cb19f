#!/usr/bin/env bash
# The tiled kernel tuned for SECONDS each at 2048 cubed and at 2048x8192x4096 (the kernel's
# view of the C-ordered 8192x2048x4096) on both backends into the shipped databases, verify's
# quick sweep with them, the aliasing and queue tests with the H100 as the test device, then the
# large products in TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new), C
# given, device arrays. From the repository root after the prelude; into $OUT/mid-large.tgz,
# packed again after each step so that a run cut short keeps what it did:
#   bash results/h100/mid-squares/run-large.sh SECONDS "TURNS"
set -u
seconds=$1 turns=$2
W=${OUT:-/tmp}/mid-large
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf mid-large.tgz.part mid-large && mv mid-large.tgz.part mid-large.tgz); }
for be in cuda opencl; do
  for s in 2048 2048x8192x4096; do
    bash scripts/tune_shipped.sh "$W/tune-$be-$s.txt" "$be" "$seconds" "--shapes $s"
  done
  bash scripts/logged_run.sh "$W/verify-$be.txt" 120 python3 -m clgemm verify --device H100 --backend $be --quick
  pack
done
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 120 "-q tests/test_gemm_overlap.py tests/test_gemm_queues.py"
pack
TURN_TIMEOUT=120 bash scripts/turns.sh "$W" "$turns" \
  "large-cuda=--device H100 --backend cuda --sizes large --c-given" \
  "large-opencl=--device H100 --backend opencl --sizes large --c-given"
pack
rm -rf "$W"
