#!/usr/bin/env bash
# The tiled kernel at 768 cubed beside the database of ../any-short-k/ (a plain tune's, and its
# two short-K steps): on each backend, one step of the tiled kernel at 768x768x768 (10 s), then
# gemm()'s calls at SHAPES with the database before the step (old) and after it (new), in
# turns, ROUNDS rounds. From the repository root after the prelude, into $OUT/step-768:
#   bash results/h200/step-768/run.sh tune                  the steps; their databases kept
#   [SHAPES=small] [ROUNDS="1 2"] [NAME=calls] bash results/h200/step-768/run.sh measure   needs DB=folder
set -u
step=$1
T=/tmp/step-768 W=${OUT:-/tmp}/step-768 DEVICE=${DEVICE:-NVIDIA} SHAPES=${SHAPES:-small}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
mkdir -p "$W"
head_of() { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
for be in ${BACKENDS:-opencl cuda}; do
  key=$(basename results/h200/plain-tune-combined/$be-*.json.gz .gz)
  rm -rf "$T/$be-old" "$T/$be-new" && mkdir -p "$T/$be-old" "$T/$be-new"
  gunzip -c results/h200/any-short-k/after-"$key".gz > "$T/$be-old/$key"
  if [ "$step" = tune ]; then
    cp "$T/$be-old/$key" "$T/$be-new/$key"
    { echo "$(head_of) (CLGEMM_RESULTS=$T/$be-new CLGEMM_SHIPPED_TUNING=0): python3 -m clgemm tune --device $DEVICE --backend $be --rungs tiled --shapes 768x768x768 --time 10 -j 16"
      CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be-new XDG_DATA_HOME=$T/data timeout 120 \
        python3 -m clgemm tune --device "$DEVICE" --backend $be --rungs tiled \
        --shapes 768x768x768 --time 10 -j 16 2>&1 | grep -v "CompilerWarning\|_prg.build"; } \
      > "$W/tune-$be.txt"
    tail -n 2 "$W/tune-$be.txt"
    gzip -c "$T/$be-new/$key" > "$W/after-$key.gz"
    continue
  fi
  gunzip -c "$DB/after-$key.gz" > "$T/$be-new/$key"
  for turn in ${ROUNDS:-1 2}; do
    for side in old new; do
      f=$W/${NAME:-calls}-$be-$turn-$side
      { echo "$(head_of) (CLGEMM_RESULTS=$T/$be-$side CLGEMM_SHIPPED_TUNING=0): python3 -m clgemm bench --call --device $DEVICE --backend $be --sizes $SHAPES --c-given --json $f.json"
        CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be-$side XDG_DATA_HOME=$T/data timeout 150 \
          python3 -m clgemm bench --call --device "$DEVICE" --backend $be --sizes "$SHAPES" \
          --c-given --json "$f.json" 2>&1 | grep -v "CompilerWarning\|_prg.build"; } > "$f.txt"
      tail -n 1 "$f.txt"
    done
  done
done
