"""A call without C returns a new array each time (`DeviceArrays.empty`): each result its own
memory, C-ordered, with its own events, however many are alive at once. Through OpenCL the new
arrays are made from a template that holds no memory, so that must never share a buffer."""

from __future__ import annotations

import numpy as np
from layouts import rand, reference

import clgemm
from clgemm.backends import KINDS


def _close(got, want) -> bool:
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max()))
    return bool(np.isfinite(got).all() and np.abs(got - want).max() < 1e-4 * scale)


def test_new_results_alive_together_are_each_their_own(every_backend):
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(7)
    m, n, k = 40, 24, 56
    pairs = [(rand(rng, (m, k)), rand(rng, (k, n))) for _ in range(4)]
    outs = []
    for x, y in pairs:
        out = clgemm.gemm(kind.upload(be, x), kind.upload(be, y))
        outs.append(out)
        assert out.shape == (m, n) and out.strides == (4 * n, 4)
    be.synchronize()
    for (x, y), out in zip(pairs, outs):  # none written by a later call
        assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False))
    places = {kind.allocation(out) for out in outs} - {None}
    assert len(places) in (0, len(outs))  # where the kind knows them, all apart


def test_the_opencl_template_holds_no_memory(every_backend):
    be = every_backend
    kind = KINDS[be.name]
    x = np.ones((16, 16), np.float32)
    clgemm.gemm(kind.upload(be, x), kind.upload(be, x))
    templates = getattr(kind, "_templates", {})
    assert be.name != "opencl" or templates
    assert all(t.base_data is None for t in templates.values())
