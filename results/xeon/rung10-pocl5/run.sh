#!/usr/bin/env bash
# Rung 10 on the GPU machine's 16-core Xeon through PoCL 5.0 with the configuration its family's
# databases store (measured right under PoCL 3.1 on 2-core machines): the ladder at three sizes
# with it and with the rung's defaults, each in its own process, then the configuration built
# alone and built and launched alone (scripts/rung_crash_probe.py). Into $OUT/rung10-pocl5.txt.
# From the repository root after the prelude:
#   bash results/xeon/rung10-pocl5/run.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
out=${OUT:-/tmp}/rung10-pocl5.txt
{ echo "# the host of an $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader), its CPU through PoCL 5.0; at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
  for a in "--size 64" "--size 64 --defaults" "--size 512" "--size 512 --defaults" "--size 1000" "--size 1000 --defaults"; do
    timeout 90 python3 -m clgemm ladder --device xeon $a --rungs 10 --repeats 1 > /tmp/l.txt 2>&1
    echo "clgemm ladder --device xeon $a --rungs 10 --repeats 1: exit $? $(grep -E '^10 ' /tmp/l.txt | tr -s ' ' | cut -c1-120)"
  done
  for step in build launch; do
    timeout 90 python3 scripts/rung_crash_probe.py xeon 10 64 $step \
      TSM=16 TSN=32 TSK=16 WPTM=16 WPTN=8 WIDTH=8 PAD=0 USE_SHUFFLE=0 SGS=32 2>&1 | grep -v Warning
    echo "python3 scripts/rung_crash_probe.py xeon 10 64 $step TSM=16 TSN=32 TSK=16 WPTM=16 WPTN=8 WIDTH=8 PAD=0 USE_SHUFFLE=0 SGS=32: exit ${PIPESTATUS[0]}"
  done
} > "$out" 2>&1
cat "$out"
