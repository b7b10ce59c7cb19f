#!/usr/bin/env bash
# On the GPU machine's 16-core Xeon through PoCL 5.0: whether the driver works in a NumPy
# array's own memory (scripts/host_ptr_probe.py), and gemm()'s call on NumPy arrays where NumPy
# allocates them against the same at 4096-byte addresses, in turns (scripts/cpu_aligned_call.py).
# From the repository root after the prelude; into $OUT/:
#   bash results/xeon/host-ptr/run.sh ROUNDS
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
bash scripts/logged_run.sh "${OUT:-/tmp}/probe-xeon.txt" 60 python3 scripts/host_ptr_probe.py xeon 1024 2048 4096
bash scripts/logged_run.sh "${OUT:-/tmp}/aligned-xeon.txt" 240 python3 scripts/cpu_aligned_call.py xeon "$1" 1024 2048 4096
