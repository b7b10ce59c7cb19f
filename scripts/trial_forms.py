"""Whether each trial runs its call's form (clgemm/library/signatures.py `Form`): gemm() on a
sweep of shapes, transposes, orders and leading dimensions, with every program's trial
recorded beside the call's form; prints each form tried, how many calls ran it, and every
call whose trial ran another form (there should be none), with each result checked.
Usage: python scripts/trial_forms.py DEVICE [BACKEND] [--quick]"""

import collections
import itertools
import sys

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.library import signatures

args = [a for a in sys.argv[1:] if not a.startswith("--")]
be = api.backend_for(args[0], args[1] if len(args) > 1 else None)
SIZES = [16, 64, 100, 257, 512, 1000, 2048] if "--quick" not in sys.argv else [16, 100, 300]
DEEP = [16384] if "--quick" not in sys.argv else [2000]
print(f"# {be.device.name.strip()} ({be.device.backend})", flush=True)

seen: collections.Counter = collections.Counter()
other: list[str] = []
real = signatures.try_configuration


def recorded(be_, config, shape, trans=(False, False), alpha=1.0, beta=0.0, form=None):
    """The trial as gemm() runs it, its program's form compared with the call's."""
    made = signatures._new_program

    def watch(sig, a, b, c, extra, trial_form=None):
        program = made(sig, a, b, c, extra, trial_form)
        ran = signatures.form_of(program.plan, a, b)
        if form is not None and ran.key != form.key:
            other.append(f"{'x'.join(map(str, shape))} {config.describe()}: call {form}, "
                         f"trial {ran}")
        seen[(config.rung, form.key if form else None)] += 1
        return program
    signatures._new_program = watch
    try:
        return real(be_, config, shape, trans, alpha, beta, form)
    finally:
        signatures._new_program = made


signatures.try_configuration = recorded
rng = np.random.default_rng(0)
shapes = [(m, n, k) for m, n, k in itertools.product(SIZES, SIZES, SIZES)]
shapes += [(m, n, k) for m in SIZES[:4] for n in SIZES[:4] for k in DEEP]
wrong = 0
for (m, n, k), ta, tb, pad in itertools.product(shapes, (False, True), (False, True), (0, 3)):
    a = rng.standard_normal((k, m + pad) if ta else (m, k + pad), dtype=np.float32)
    b = rng.standard_normal((n, k + pad) if tb else (k, n + pad), dtype=np.float32)
    a = a[:, :m] if ta else a[:, :k]
    b = b[:, :k] if tb else b[:, :n]
    got = clgemm.gemm(a, b, trans_a=ta, trans_b=tb, backend=be)
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b)
    wrong += not np.allclose(got, want, rtol=1e-3, atol=1e-3 * max(1, np.abs(want).max()))
for (rung, key), count in sorted(seen.items(), key=str):
    print(f"rung {rung} form {key}: {count} trial programs", flush=True)
print(f"{len(shapes) * 8} calls, {wrong} wrong; trials in another form than the call's: "
      f"{len(other)}", flush=True)
for line in other:
    print("  " + line, flush=True)
