#!/usr/bin/env bash
# Whether the AVX2 database and the lookup's vector-width rule move anything on the GPU
# machine's 16-core Xeon (AVX-512, PoCL 5.0): gemm()'s choices there at a set of shapes with the
# package of $OLD_COMMIT in ./abold (old) and with this tree (new), then the lookup's and the
# call's tests with the Xeon as the test device. Into $OUT/vector-width/. From the repository
# root after the prelude:
#   bash results/xeon/vector-width/run.sh
set -u
W=${OUT:-/tmp}/vector-width
mkdir -p "$W"
export XDG_DATA_HOME=/tmp/clgemm-data PYTHONUNBUFFERED=1
shapes="64 256 512 1000 1024 2048 4096 2048x2048x64 1024x16x1024 16x1024x1024 1000x64x64"
head="# the host of an $(nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader); at commit ${COMMIT:-?}"
for side in old new; do
  dir=$PWD what="this tree"; [ $side = old ] && dir=$PWD/abold what="package of ${OLD_COMMIT:-?}"
  { echo "$head ($side: $what); $(date -u +%FT%TZ): python3 scripts/choice_table.py xeon $shapes"
    PYTHONPATH=$dir python3 scripts/choice_table.py xeon $shapes 2>&1 | grep -v "Warning\|_prg.build"
  } > "$W/choices-$side.txt"
done
diff <(tail -n +2 "$W/choices-old.txt") <(tail -n +2 "$W/choices-new.txt") > "$W/choices.diff" \
  && echo "no choice moved" >> "$W/choices.diff"
tail -1 "$W/choices.diff"
bash scripts/device_tests.sh "$W/tests-xeon.txt" xeon 200 \
  "-q -p no:cacheprovider tests/test_lookup.py tests/test_gemm_api.py tests/test_first_hour.py"
