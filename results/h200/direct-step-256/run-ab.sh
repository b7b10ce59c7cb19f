#!/usr/bin/env bash
# On the GPU machine (two GPUs: OpenCL on the first, the CUDA path on the second, at once),
# after the prelude, from the repository root: the direct kernel's configurations that either
# tree chooses at 64-384 cubed, forced on gemm()'s repeated call in turns in one process
# (scripts/small_config_ab.py, ROUNDS default 5): the entries of 512 cubed of each backend's
# plain tune (`cuda512`, `opencl512`), the one its step at 256 cubed stored on both (`step256`:
# step/), and the H100's entry of 256 cubed that an H200 reads from the shipped
# databases (`h100-256`). Into $OUT/direct-step-ab.
set -u
W=$OUT/direct-step-ab; mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
declare -A gpu=([opencl]=0 [cuda]=1)
for be in opencl cuda; do
  ( { echo "# $(nvidia-smi -i "${gpu[$be]}" --query-gpu=name,driver_version,pci.bus_id \
        --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
      echo "python3 scripts/small_config_ab.py H200 $be 64,128,192,256,384 ${ROUNDS:-5} (as below)"
      CUDA_VISIBLE_DEVICES=${gpu[$be]} timeout 280 python3 scripts/small_config_ab.py H200 $be \
        64,128,192,256,384 "${ROUNDS:-5}" cuda512=16,32,32,2,2,1 opencl512=32,32,16,2,2,1 \
        step256=16,16,16,1,1,1 h100-256=16,16,32,1,1,1 2>&1 \
        | grep -v "CompilerWarning\|_prg.build"
    } > "$W/ab-$be.txt" ) &
done
wait
(cd "$OUT" && tar czf direct-step-ab.tgz direct-step-ab && rm -rf direct-step-ab)
