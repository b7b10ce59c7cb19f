"""On the GPU machine's Xeon (or the device given): the skinny kernel's `global` form with one
parameter changed at a time, each swept as tests/test_skinny.py sweeps it (column-major); its
trial (clgemm/library/trial.py) as a stored configuration at three skinny shapes; and gemm() at
4096x4096x16 with it stored. From the repository root:
    python3 results/h100/trial/hosts/diag.py [DEVICE]"""
import sys, warnings, itertools
sys.path.insert(0, "tests")
import numpy as np
import test_skinny
import clgemm
from clgemm.configs import choice
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.library.signatures import try_configuration
from clgemm.rungs.skinny import SKINNY

be = api.backend_for(sys.argv[1] if len(sys.argv) > 1 else "xeon")
print(be.device.name, flush=True)
base = dict(test_skinny.PARAM_SETS["global"])
variants = {
    "global": {},
    "global PREFETCH=0": {"PREFETCH": 0},
    "global YLOCAL=1": {"YLOCAL": 1},
    "global LK=1": {"LK": 1},
    "global VR=1": {"VR": 1},
    "global SB=4": {"SB": 4},
    "global KC=1": {"KC": 1},
}
for label, change in variants.items():
    params = SKINNY.resolve({**base, **change})
    bad = runs = 0
    for what, got, want, untouched in test_skinny.sweep_cases(be, params, "F", test_skinny.SHAPES, "global"):
        runs += 1
        wrong = ~(np.abs(got - want) <= 1e-4 * max(1.0, float(np.abs(want).max())))
        bad += bool(wrong.any())
    print(f"{label:20} sweep: {bad} of {runs} cases wrong", flush=True)
# the trial on the stored form of the global configuration, at a skinny call's shapes
params = SKINNY.resolve(base)
stored = Config(SKINNY.number, params, "database")
for shape in [(4096, 16, 4096), (300, 7, 150), (16, 4096, 4096)]:
    print(shape, "trial:", try_configuration(be, stored, shape, (False, False), 1.0, 0.0), flush=True)
real = choice.choose_kernel
choice.choose_kernel = lambda d, s, rejected=choice.never, cross=None: stored if not rejected(SKINNY.number, params) else real(d, s, rejected, cross)
api.clear_caches()
rng = np.random.default_rng(1)
a = rng.standard_normal((4096, 4096), dtype=np.float32); b = rng.standard_normal((4096, 16), dtype=np.float32)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    c = clgemm.gemm(a, b, backend=be)
ref = a.astype(np.float64) @ b
print("gemm() through the stored global configuration: max error", float(np.abs(c - ref).max()), "of", float(np.abs(ref).max()),
      "; warnings:", [str(w.message)[:200] for w in caught], flush=True)
