#!/usr/bin/env bash
# The record of failed trials on the GPU machine's 16-core Xeon (PoCL 5.0), in a results folder
# of its own: where rung 10 at 64 cubed takes its configuration from before anything is
# recorded, verify --quick --rungs 10 (whose trial of the family configuration crashes and is
# recorded), the record itself, then the same question and the ladder's rung 10 at 64 cubed
# again. Into $OUT/trial-record.txt; from the repository root after the prelude:
#   bash results/xeon/trial-record/run.sh
set -u
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
export CLGEMM_RESULTS=$(mktemp -d)
out=${OUT:-/tmp}/trial-record.txt
source_of() {
  python3 -c "from clgemm.configs.configuration import configure; from clgemm.library import gemm as api; d = api.backend_for('xeon').device; c = configure(d, 10, (64, 64, 64)); print('rung 10 at 64 cubed:', c.source, c.text())" 2>&1 | grep -v Warning
}
{ echo "# the host of an $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader), its CPU through PoCL 5.0; at commit ${COMMIT:-?}; $(date -u +%FT%TZ); CLGEMM_RESULTS=$CLGEMM_RESULTS"
  echo "## before"; source_of
  echo "## python3 -m clgemm verify --device xeon --quick --rungs 10"
  timeout 300 python3 -m clgemm verify --device xeon --quick --rungs 10 2>&1 | grep -E "trying|cases,|^rung|^  *rung|FAILED \(" | head -20
  echo "## the record"; cat "$CLGEMM_RESULTS"/trials/*.json
  echo "## after"; source_of
  echo "## python3 -m clgemm ladder --device xeon --rungs 10 --size 64"
  timeout 300 python3 -m clgemm ladder --device xeon --rungs 10 --size 64 2>&1 | grep -E "trying|^10 |failed its trial|exit"
  echo "exit ${PIPESTATUS[0]}"
} > "$out" 2>&1
cat "$out"
