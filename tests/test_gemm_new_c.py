"""A call without C returns a new array each time (`DeviceArrays.empty`): each result its own
memory, C-ordered, with its own events, however many are alive at once. Through OpenCL the new
arrays are made from a template that holds no memory, so that must never share a buffer."""

from __future__ import annotations

import numpy as np
import pytest
from layouts import rand, reference

import clgemm
from clgemm.backends import KINDS
from clgemm.library import gemm as api


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


PARAMS = dict(TSM=16, TSN=16, TSK=16, WPTM=4, WPTN=4, WIDTH=4, VWM=1, VWN=1, CACHE_A=1,
              CACHE_B=1)


@pytest.mark.parametrize("reads_b", [False, True], ids=["packs B", "one launch"])
def test_repeated_calls_into_new_results_read_their_own_operands(every_backend, forced_tiled,
                                                                 reads_b):
    """A repeated call without C takes its quick way (`HotCall._quick_new`): one launch, or a
    pack of B into kept scratch and then the kernel; every result stays right while the
    later calls reuse that scratch."""
    be = every_backend
    kind = KINDS[be.name]
    forced_tiled(be, PARAMS, reads_b)
    rng = np.random.default_rng(11)
    n = 64
    pairs = [(rand(rng, (n, n)), rand(rng, (n, n))) for _ in range(5)]
    outs = [clgemm.gemm(kind.upload(be, x), kind.upload(be, y)) for x, y in pairs]
    be.synchronize()
    for (x, y), out in zip(pairs, outs):
        assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False))
    hot = list(api.CACHE.hot.values())
    assert hot and all(h.quick is not None for h in hot)
