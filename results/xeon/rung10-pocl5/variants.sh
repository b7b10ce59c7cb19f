#!/usr/bin/env bash
# Which parameter of rung 10's crashing configuration (../rung10-pocl5/) the PoCL 5.0 crash on
# the 16-core Xeon follows: the configuration with one parameter changed at a time, each built
# and launched once at 64 cubed in its own process (scripts/rung_crash_probe.py), and the
# configuration itself at sizes its tiles divide and sizes they do not. Into $OUT/variants.txt.
# From the repository root after the prelude:
#   bash results/xeon/rung10-pocl5/variants.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
out=${OUT:-/tmp}/variants.txt
base="TSM=16 TSN=32 TSK=16 WPTM=16 WPTN=8 WIDTH=8 PAD=0 USE_SHUFFLE=0 SGS=32"
probe() {  # SIZE RUNG CHANGES...
  local size=$1 rung=$2; shift 2
  local params="$base $*"
  timeout 60 python3 scripts/rung_crash_probe.py xeon "$rung" "$size" launch $params > /tmp/p.txt 2>&1
  local code=$?
  echo "rung $rung at ${size}^3, ${*:-as stored}: exit $code; $(grep '^ran' /tmp/p.txt)"
}
{ echo "# the host of an $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader), its CPU through PoCL 5.0; at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
  echo "# base configuration: $base"
  for size in 16 32 48 64 65 100 128; do probe $size 10; done
  for change in PAD=1 PAD=2 WIDTH=4 WIDTH=2 WIDTH=1 TSK=8 TSK=32 "WPTM=8" "WPTM=4" \
                "WPTN=4" "WPTN=16" "TSM=32" "TSM=64" "TSN=64" "TSN=16 WPTN=4"; do
    probe 64 10 $change
  done
  for rung in 7 8 9; do probe 64 $rung; done
} > "$out" 2>&1
cat "$out"
