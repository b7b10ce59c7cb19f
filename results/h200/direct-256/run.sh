#!/usr/bin/env bash
# On the GPU machine, after the prelude, from the repository root: the direct kernel's
# configurations at 192-384 cubed forced on gemm()'s repeated call, in turns, on each backend
# (scripts/small_config_ab.py): the one the plain tune of ../plain-tune-6837b02 stored at 512
# cubed on each backend (which the lookup chooses at 128-256 cubed), the one stored at 128
# cubed, and smaller tiles that make more work-groups. Into $OUT/direct-256.
set -u
W=$OUT/direct-256; mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
for be in opencl cuda; do
  { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
    echo "python3 scripts/small_config_ab.py H200 $be 192,256,384 3 (candidates as below)"
    timeout 250 python3 scripts/small_config_ab.py H200 $be 192,256,384 3 \
      opencl512=32,32,16,2,2,1 cuda512=16,32,32,2,2,1 tuned128=16,16,32,1,1,1 \
      t32x16=32,16,16,2,2,1 t16x16=16,16,16,2,2,1 t16x16k32=16,16,32,2,2,1 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"
  } > "$W/ab-$be.txt"
done
(cd "$OUT" && tar czf direct-256.tgz direct-256 && rm -rf direct-256)
