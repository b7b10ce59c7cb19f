#!/usr/bin/env bash
# The plain `clgemm tune` on an NVIDIA GPU (an H100 or H200) that nothing was tuned for: no shipped database read
# (CLGEMM_SHIPPED_TUNING=0) and an empty results folder, as on a GPU of a new architecture. On
# a two-GPU machine the OpenCL tune runs on the first GPU and the CUDA path's on the second, at
# once, each with 16 building processes (what a one-GPU machine of 16 cores gives it). Then,
# with each tune's database alone against the shipped ones, on the same GPU: verify's quick
# sweep, the tiled kernel alone at 4096 and 8192 cubed beside the vendor's (bench), and gemm()'s
# calls on the large products, the classes and the small squares (bench --call, C given, device
# arrays). From the repository root after the prelude:
#   bash results/h100/fresh-tune/run.sh start     the tunes, in new sessions; waits 30 s, then up to WAIT s (520)
#   bash results/h100/fresh-tune/run.sh finish    waits for them, then measures; into $OUT/
# A tune outlives `start` (setsid): `finish` must follow while the machine is still held. A
# tune still running FINISH_WAIT s (240) into `finish` is interrupted, and the tunes' journals
# and databases are taken as they are.
set -u
step=$1
WAIT=${WAIT:-520}
T=/tmp/fresh-tune
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-}
# BACKENDS (default both), each on its GPU (OPENCL_GPU 0, CUDA_GPU 1); SETS of bench --call
BACKENDS=${BACKENDS:-opencl cuda}
SETS=${SETS:-large classes small}
# the GPU by a part of its name (an H200 of the device machine serves as well)
DEVICE=${DEVICE:-NVIDIA}
TUNINGS=${TUNINGS:-fresh shipped}
declare -A gpu=([opencl]=${OPENCL_GPU:-0} [cuda]=${CUDA_GPU:-1})

head_of() {  # the GPU the backend runs on, the commit, the date
  echo "# $(nvidia-smi -i "${gpu[$1]}" --query-gpu=name,driver_version,pci.bus_id \
    --format=csv,noheader); at commit ${COMMIT:-?}; $(date -u +%FT%TZ)"
}

# BACKEND TUNING FILE SECONDS COMMAND...: TUNING is fresh (the tune's database alone) or
# shipped (the package's databases alone), on the backend's GPU, into FILE
on() {
  local be=$1 tuning=$2 file=$3 seconds=$4
  shift 4
  local shipped=0 results=$T/$be
  [ "$tuning" = shipped ] && shipped=1 results=$T/empty-$be
  mkdir -p "$results"
  { echo "$(head_of "$be") ($tuning tuning): $*"
    CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_SHIPPED_TUNING=$shipped CLGEMM_RESULTS=$results \
      XDG_DATA_HOME=$T/data-$be timeout "$seconds" "$@" 2>&1 \
      | grep -v "CompilerWarning\|_prg.build"; } > "$file"
  tail -n 1 "$file"
}

if [ "$step" = start ]; then
  rm -rf "$T" && mkdir -p "$T"
  for be in $BACKENDS; do
    mkdir -p "$T/$be"
    { head_of $be; echo "# CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be" \
        "python3 -m clgemm tune --device $DEVICE --backend $be -j 16"; } > "$T/tune-$be.txt"
    CUDA_VISIBLE_DEVICES=${gpu[$be]} CLGEMM_SHIPPED_TUNING=0 CLGEMM_RESULTS=$T/$be \
      XDG_DATA_HOME=$T/data-$be setsid nohup python3 -m clgemm tune --device "$DEVICE" \
      --backend $be -j 16 >> "$T/tune-$be.txt" 2>&1 < /dev/null &
    echo $! > "$T/tune-$be.pid"
  done
  sleep 30  # a tune that stopped at once (a device not found, say) stops both
  for be in $BACKENDS; do
    kill -0 "$(cat "$T/tune-$be.pid")" 2>/dev/null && continue
    cat "$T/tune-$be.txt"; pkill -f "clgemm tune"; exit 1
  done
fi

# `finish` on a machine that never ran `start` (the one that did was given back between the
# calls) would measure with no database at all: stop instead
if [ "$step" = finish ] && ! ls "$T"/tune-*.pid >/dev/null 2>&1; then
  echo "no tune was started on this machine ($T is empty): run 'start' again"; exit 3
fi
running() { local p; for p in "$T"/tune-*.pid; do kill -0 "$(cat "$p")" 2>/dev/null && return 0; done; return 1; }
waited=0 limit=$WAIT
[ "$step" = finish ] && limit=${FINISH_WAIT:-240}  # then what the journals and databases hold
while running && [ $waited -lt "$limit" ]; do sleep 5; waited=$((waited + 5)); done
[ "$step" = finish ] && running && { echo "tunes still running after $limit s: stopped"; pkill -INT -f "clgemm tune"; sleep 10; }
for be in $BACKENDS; do echo "== $be"; tail -n 3 "$T/tune-$be.txt"; done
[ "$step" = start ] && exit 0

W=${OUT:-/tmp}/fresh-tune
mkdir -p "$W"
for be in $BACKENDS; do
  cp "$T/tune-$be.txt" "$W/"
  cp "$T/$be"/*.json "$W/" 2>/dev/null
  cp -r "$T/$be/journals" "$W/journals-$be" 2>/dev/null
done
measure() {  # one backend's runs, in order, on its own GPU
  local be=$1 ref=""
  [ "$be" = opencl ] && ref="--clblast-params results/h100/clblast-xgemm-tuned.json"
  on "$be" fresh "$W/verify-$be.txt" 120 python3 -m clgemm verify --device "$DEVICE" --backend "$be" --quick
  on "$be" fresh "$W/kernel-$be.txt" 120 python3 -m clgemm bench --device "$DEVICE" --backend "$be" \
    --sizes 4096,8192 --rungs tiled --json "$W/kernel-$be.json"
  for set in $SETS; do
    for tuning in $TUNINGS; do
      on "$be" $tuning "$W/$set-$be-$tuning.txt" 150 python3 -m clgemm bench --call --device "$DEVICE" \
        --backend "$be" --sizes $set --c-given $ref --json "$W/$set-$be-$tuning.json"
    done
  done
}
for be in $BACKENDS; do measure "$be" > "$W/progress-$be.txt" 2>&1 & done
wait
(cd "${OUT:-/tmp}" && tar czf fresh-tune.tgz fresh-tune && rm -rf fresh-tune)
