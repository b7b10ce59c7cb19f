"""The skinny kernel's sweep of tests/test_skinny.py through gemm_buffers, repeated on one device:
for each wrong answer, how many entries of C were wrong and where. Run from the repository root:
    python3 scripts/skinny_repeat.py DEVICE REPEATS [PARAM_SET ...]   (default: global)"""
import itertools
import sys

sys.path.insert(0, "tests")
import numpy as np
import test_skinny

import clgemm
from clgemm.library import gemm as api
from clgemm.rungs.skinny import SKINNY

dev, n, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:] or ["global"]
be = api.backend_for(dev)
print(be.device.name, be.device.backend, clgemm.__file__, flush=True)
bad = runs = 0
for name in names:
    params = SKINNY.resolve(test_skinny.PARAM_SETS[name])
    for i, order in itertools.product(range(n), ("F", "C")):
        for what, got, want, untouched in test_skinny.sweep_cases(be, params, order,
                                                                  test_skinny.SHAPES, name):
            runs += 1
            wrong = ~(np.abs(got - want) <= 1e-4 * max(1.0, float(np.abs(want).max())))
            if wrong.any() or not untouched:
                bad += 1
                rows, cols = np.nonzero(wrong)
                print(f"{i} {what}: {wrong.sum()} of {wrong.size} wrong"
                      + (f", rows {rows.min()}-{rows.max()}, cols {sorted(set(cols.tolist()))[:10]}"
                         if wrong.any() else "")
                      + f", nan {np.isnan(got).sum()}, around C untouched: {untouched}", flush=True)
print("wrong", bad, "of", runs, flush=True)
