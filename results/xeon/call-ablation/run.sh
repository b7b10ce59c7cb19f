#!/usr/bin/env bash
# On the GPU machine's 16-core Xeon through PoCL 5.0, on its family's shipped tuning (the 2-core
# Xeon's database), with the tree as committed at $COMMIT: the library's call tests with the
# Xeon as the test device; `bench --call --arrays numpy` at 1024-4096 cubed with a new C and
# with a given one (the call against its kernel and NumPy); where a 1024-cubed call's time goes;
# what each technique of the stored configuration adds at 1024 and 2048 cubed in ROUNDS rounds.
# From the repository root after the prelude; into $OUT/call-ablation.tgz, packed again after
# each step so that a run cut short keeps what it did:
#   bash results/xeon/call-ablation/run.sh ROUNDS
set -u
rounds=$1
W=${OUT:-/tmp}/call-ablation
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
pack() { (cd "$(dirname "$W")" && tar czf call-ablation.tgz.part call-ablation && mv call-ablation.tgz.part call-ablation.tgz); }
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 150 "-q -p no:cacheprovider tests/test_gemm_api.py tests/test_gemm_overlap.py tests/test_gemm_queues.py tests/test_gemm_repeated.py tests/test_gemm_stacks.py"
pack
bash scripts/logged_run.sh "$W/call-new.txt" 120 python3 -m clgemm bench --call --arrays numpy --device xeon --sizes 1024,2048,4096 --json "$W/call-new.json"
pack
bash scripts/logged_run.sh "$W/call-given.txt" 120 python3 -m clgemm bench --call --arrays numpy --device xeon --sizes 1024,2048,4096 --c-given --json "$W/call-given.json"
pack
(cd scripts && bash logged_run.sh "$W/parts-1024.txt" 60 python3 numpy_call_parts.py xeon 1024)
pack
bash scripts/logged_run.sh "$W/ablation-xeon-16core.txt" 150 python3 scripts/technique_ablation.py xeon opencl "$rounds" 1024 2048
pack
rm -rf "$W"
