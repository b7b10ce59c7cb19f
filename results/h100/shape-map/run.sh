#!/usr/bin/env bash
# gemm() against cuBLAS (and CLBlast through OpenCL) at COUNT shapes drawn with a fixed seed from
# the lookup's grid of `scripts/choice_moves.py` (M, N in its SIZES, K in its DEPTHS; as gemm()
# is called: C-ordered, C given, device arrays), with the shipped databases. On a two-GPU
# machine OpenCL runs on the first GPU and the CUDA path on the second, at once. From the
# repository root after the prelude; into $OUT/shape-map.tgz:
#   bash results/h100/shape-map/run.sh [COUNT]
set -u
count=${1:-60}
W=${OUT:-/tmp}/shape-map
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
DEVICE=${DEVICE:-NVIDIA}
gpus=$(nvidia-smi -L | wc -l)
declare -A gpu=([opencl]=0 [cuda]=$((gpus > 1 ? 1 : 0)))
shapes=$(python3 -c "
import random, sys
sys.path.insert(0, 'scripts')
from choice_moves import SIZES, DEPTHS
grid = [(m, n, k) for m in SIZES for n in SIZES for k in DEPTHS]
print(','.join('x'.join(map(str, s)) for s in sorted(random.Random(2026).sample(grid, $count))))")
one() {
  local be=$1 ref=""
  [ "$be" = opencl ] && ref="--clblast-params results/h100/clblast-xgemm-tuned.json"
  CUDA_VISIBLE_DEVICES=${gpu[$be]} COMMIT=${COMMIT:-?} bash scripts/logged_run.sh "$W/map-$be.txt" \
    "${MAP_S:-280}" python3 -m clgemm bench --call --device "$DEVICE" --backend "$be" --sizes "$shapes" \
    --c-given $ref --json "$W/map-$be.json"
}
if [ "$gpus" -gt 1 ]; then
  for be in opencl cuda; do one $be & done
  wait
else
  for be in cuda opencl; do one $be; done
fi
(cd "$(dirname "$W")" && tar czf shape-map.tgz shape-map && rm -rf shape-map)
