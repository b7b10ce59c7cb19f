"""Repeat the skinny kernel's sweep of tests/test_skinny.py through gemm_buffers on one device;
for each wrong answer, how many entries of C were wrong and where."""
import itertools
import sys

sys.path.insert(0, "tests")
import numpy as np
from layouts import embed, extract, rand, reference

import clgemm
import test_skinny as t
from clgemm.backends import KINDS
from clgemm.library import gemm as api
from clgemm.rungs.skinny import SKINNY

dev, n, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:] or ["global"]
be = api.backend_for(dev)
kind = KINDS[be.name]
print(be.device.name, be.device.backend, clgemm.__file__, flush=True)
bad = runs = 0
for name in names:
    params = SKINNY.resolve(t.PARAM_SETS[name])
    for i, order in itertools.product(range(n), ("F", "C")):
        rng = np.random.default_rng(len(name))
        for (m, nn, k), (ta, tb) in itertools.product(t.SHAPES, itertools.product((False, True), repeat=2)):
            a = rand(rng, (k, m) if ta else (m, k))
            b = rand(rng, (nn, k) if tb else (k, nn))
            for alpha, beta in ((1.5, 0.0), (-0.5, 2.0)):
                c = rand(rng, (m, nn)) if beta else np.full((m, nn), np.nan, np.float32)
                lds = {x: (s[0] if order == "F" else s[1]) + 3 for x, s in
                       (("a", a.shape), ("b", b.shape), ("c", c.shape))}
                flats = {"a": embed(a, order, lds["a"], 5, np.nan),
                         "b": embed(b, order, lds["b"], 2, np.nan),
                         "c": embed(c, order, lds["c"], 11)}
                arrays = {x: kind.upload(be, f) for x, f in flats.items()}
                bufs = {x: kind.buffer_of(arr)[0] for x, arr in arrays.items()}
                clgemm.gemm_buffers(m, nn, k, bufs["a"], bufs["b"], bufs["c"], alpha=alpha,
                                    beta=beta, trans_a=ta, trans_b=tb, lda=lds["a"], ldb=lds["b"],
                                    ldc=lds["c"], a_offset=5, b_offset=2, c_offset=11, order=order,
                                    backend=be, rung=SKINNY.number, params=params)
                be.synchronize()
                got = extract(kind.download(arrays["c"]), (m, nn), order, lds["c"], 11)
                want = reference(a, b, c, alpha, beta, ta, tb)
                runs += 1
                wrong = ~(np.abs(got - want) <= 1e-4 * max(1.0, float(np.abs(want).max())))
                if wrong.any():
                    bad += 1
                    rows, cols = np.nonzero(wrong)
                    print(f"{name} {i} {order} {(m, nn, k)} ta={ta} tb={tb} beta={beta}: "
                          f"{wrong.sum()} of {wrong.size} wrong, rows {rows.min()}-{rows.max()}, "
                          f"cols {sorted(set(cols.tolist()))[:10]}, nan {np.isnan(got).sum()}",
                          flush=True)
print("wrong", bad, "of", runs, flush=True)
