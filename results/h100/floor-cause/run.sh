#!/usr/bin/env bash
# Whether a process's floor per call follows its memory layout or its string hashes: many
# processes of `scripts/floor_parts.py` at 256 cubed on each backend, in turns over four ways of
# starting them: as usual (random layout, random hash seed), with the layout fixed (`setarch -R`,
# no address randomisation) and a fixed PYTHONHASHSEED, with the layout fixed and other seeds,
# and with a fixed seed but a random layout. Into $OUT/floor-cause/floor.txt, one line a process.
# From the repository root after the prelude, GPU naming the device (default NVIDIA):
#   bash results/h100/floor-cause/run.sh ROUNDS
set -u
rounds=${1:-4}
gpu=${GPU:-NVIDIA}
W=${OUT:-/tmp}/floor-cause
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
f=$W/floor.txt
echo "# $(nvidia-smi -i 0 --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ): bash results/h100/floor-cause/run.sh $rounds" > "$f"
one() {  # LABEL BACKEND PREFIX...: one process, its line labelled
  local label=$1 be=$2; shift 2
  echo "$label $(cd scripts && timeout 60 "$@" python3 floor_parts.py "$gpu" "$be" 256 2>&1 \
    | grep -v "CompilerWarning\|_prg.build" | tail -n 1)" >> "$f"
}
for be in opencl cuda; do one warm "$be" env; done  # builds cached before the turns
for r in $(seq "$rounds"); do
  for be in opencl cuda; do
    one "usual" "$be" env
    one "fixed-layout seed=0" "$be" env PYTHONHASHSEED=0 setarch "$(uname -m)" -R
    one "fixed-layout seed=$r" "$be" env PYTHONHASHSEED="$r" setarch "$(uname -m)" -R
    one "random-layout seed=0" "$be" env PYTHONHASHSEED=0
  done
done
cat "$f"
