#!/usr/bin/env bash
# After the tunes: two more turns of the classes (old: the package of $OLD_COMMIT in ./abold), the
# tests on the machine's CPU, `bench --call` on both backends of the H100 and on NumPy arrays on
# the 16-core Xeon through PoCL 5.0 (a device nobody tuned: its family's tuning), all into
# $OUT/r.tgz. Run from the repository root after the prelude.
set -u
R=$OUT/r; mkdir -p $R
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader > $R/gpu.txt
date -u +%FT%TZ > $R/start.txt
OUT=$R/turns timeout 150 bash results/h100/call/cross-backend/run-turns.sh "4 5"
OUT=$R/gpu timeout 60 bash scripts/gpu_call_bench.sh xeon-tests > /dev/null 2>&1; tail -1 $R/gpu/xeon-tests.log
( date -u +%FT%TZ; timeout 200 python3 -m clgemm bench --call --device H100 --backend cuda --json $R/bench-call-cuda.json ) > $R/bench-call-cuda.txt 2>&1; tail -2 $R/bench-call-cuda.txt
( date -u +%FT%TZ; timeout 200 python3 -m clgemm bench --call --device H100 --backend opencl --clblast-params results/h100/clblast-xgemm-tuned.json --json $R/bench-call-opencl.json ) > $R/bench-call-opencl.txt 2>&1; tail -2 $R/bench-call-opencl.txt
( date -u +%FT%TZ; timeout 150 python3 -m clgemm bench --call --device xeon --arrays numpy --json $R/bench-call-xeon.json ) > $R/bench-call-xeon.txt 2>&1; tail -2 $R/bench-call-xeon.txt
( date -u +%FT%TZ; timeout 150 python3 -m clgemm bench --call --device xeon --arrays numpy --sizes 1024,2048,4096 --json $R/xeon-call.json ) > $R/xeon-call.txt 2>&1; tail -8 $R/xeon-call.txt
cd $OUT && tar czf r.tgz r && rm -rf r
