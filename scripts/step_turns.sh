#!/usr/bin/env bash
# One tune step added to a database, then gemm()'s calls with the database before the step (old)
# and after it (new), in turns. On the GPU machine after the prelude, from the repository root:
#   BASE=DIR RUNG=R STEP=MxNxK SECONDS=S NAME=DIR_NAME bash scripts/step_turns.sh tune
#     on each backend, the database BASE/after-KEY.gz (KEY: the backend's file in
#     results/h200/plain-tune-combined), one step of rung R at STEP for S seconds; the database
#     after it into $OUT/NAME/after-KEY.gz, the tune's output beside it
#   BASE=... NAME=... DB=DIR [SHAPES=small] [ROUNDS="1 2"] [STEM=calls] \
#     bash scripts/step_turns.sh measure
#     bench --call --c-given at SHAPES with BASE's database (old) and DB's (new), in turns
# BACKENDS (default "opencl cuda") and DEVICE (default NVIDIA) pick where it runs.
set -u
step=$1
T=/tmp/$NAME W=${OUT:-/tmp}/$NAME DEVICE=${DEVICE:-NVIDIA} SHAPES=${SHAPES:-small}
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
mkdir -p "$W"
head_of() { echo "# $(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"; }
quiet() { grep -v "CompilerWarning\|_prg.build"; }
for be in ${BACKENDS:-opencl cuda}; do
  key=$(basename results/h200/plain-tune-combined/$be-*.json.gz .gz)
  rm -rf "$T/$be-old" "$T/$be-new" && mkdir -p "$T/$be-old" "$T/$be-new"
  gunzip -c "$BASE/after-$key.gz" > "$T/$be-old/$key"
  if [ "$step" = tune ]; then
    cp "$T/$be-old/$key" "$T/$be-new/$key"
    cmd="python3 -m clgemm tune --device $DEVICE --backend $be --rungs $RUNG --shapes $STEP --time $SECONDS -j 16"
    { echo "$(head_of) (CLGEMM_RESULTS=$T/$be-new CLGEMM_SHIPPED_TUNING=0): $cmd"
      CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be-new XDG_DATA_HOME=$T/data timeout 120 \
        $cmd 2>&1 | quiet; } > "$W/tune-$be.txt"
    tail -n 2 "$W/tune-$be.txt"
    gzip -c "$T/$be-new/$key" > "$W/after-$key.gz"
    continue
  fi
  gunzip -c "$DB/after-$key.gz" > "$T/$be-new/$key"
  for turn in ${ROUNDS:-1 2}; do
    for side in old new; do
      f=$W/${STEM:-calls}-$be-$turn-$side
      cmd="python3 -m clgemm bench --call --device $DEVICE --backend $be --sizes $SHAPES --c-given --json $f.json"
      { echo "$(head_of) (CLGEMM_RESULTS=$T/$be-$side CLGEMM_SHIPPED_TUNING=0): $cmd"
        CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be-$side XDG_DATA_HOME=$T/data timeout 150 \
          $cmd 2>&1 | quiet; } > "$f.txt"
      tail -n 1 "$f.txt"
    done
  done
done
