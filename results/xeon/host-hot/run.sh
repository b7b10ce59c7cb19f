#!/usr/bin/env bash
# Repeated calls on NumPy arrays on a CPU device through the remembered call (HostCall): the
# library's call tests with the H100 and the Xeon as the test device; then on the Xeon, in
# TURNS with the package of $OLD_COMMIT (old, ./abold) and this tree (new), where a call's
# time goes at 1024-4096 cubed (scripts/cpu_call_timeline.py, ROUNDS calls each) and
# `bench --call --arrays numpy` at 64-1024 cubed into a given C. From the repository root
# after the prelude; into $OUT/host-hot.tgz, packed again after each step:
#   bash results/xeon/host-hot/run.sh "TURNS" ROUNDS
set -u
turns=$1 rounds=$2
W=${OUT:-/tmp}/host-hot
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf host-hot.tgz.part host-hot && mv host-hot.tgz.part host-hot.tgz); }
calls="tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py tests/test_gemm_host_hot.py"
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 150 "-q -p no:cacheprovider $calls"
pack
bash scripts/device_tests.sh "$W/tests-H100.txt" H100 170 "-q -p no:cacheprovider $calls tests/test_cuda_gemm.py"
pack
head="# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader) and the machine's CPU through PoCL 5.0"
for turn in $turns; do
  for v in old new; do
    dir=$PWD; [ $v = old ] && dir=$PWD/abold
    { echo "$head; at commit ${COMMIT:-?} ($v: $([ $v = old ] && echo "package of ${OLD_COMMIT:-?}" || echo "this tree")); $(date -u +%FT%TZ): python3 scripts/cpu_call_timeline.py xeon $rounds 1024 2048 4096"
      PYTHONPATH=$dir:${PYTHONPATH:-} timeout 100 python3 scripts/cpu_call_timeline.py xeon "$rounds" 1024 2048 4096 2>&1 \
        | grep -v "CompilerWarning\|_prg.build"; } > "$W/timeline-$turn-$v.txt"
    tail -n 3 "$W/timeline-$turn-$v.txt"
  done
done
pack
HEAD="$head; at commit ${COMMIT:-?}" TURN_TIMEOUT=120 bash scripts/turns.sh "$W/turns" "$turns" \
  "small-numpy=--device xeon --arrays numpy --sizes 64,128,256,512,1024 --c-given"
pack
rm -rf "$W"
