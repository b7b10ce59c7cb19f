"""A call repeated on the very same device arrays skips its key (`library.same_call`): each test
checks that the call still computes the right product, with C poisoned first, and that any
change to an array's signature, a scalar or the arrays themselves takes the key's way again."""

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


@pytest.fixture
def keys_made(monkeypatch):
    """How many times gemm() made a call's key, counted from here."""
    made = [0]
    real = api._call_key

    def counted(*args):
        made[0] += 1
        return real(*args)
    monkeypatch.setattr(api, "_call_key", counted)
    return made


def _operands(be, n, seed=0):
    kind = KINDS[be.name]
    rng = np.random.default_rng(seed)
    x, y = rand(rng, (n, n)), rand(rng, (n, n))
    return kind, x, y, kind.upload(be, x), kind.upload(be, y)


def _call(be, kind, a, b, c, **kw):
    with be.activate():  # on C's own GPU, of several: ordered before the call there
        c.fill(np.nan)  # poisoned in place: the same C object each time
    out = clgemm.gemm(a, b, c, **kw)
    with be.activate():
        be.synchronize()
    assert out is c
    return kind.download(out)


def test_a_call_repeated_on_the_same_arrays_makes_no_key(every_backend, keys_made):
    be = every_backend
    kind, x, y, a, b = _operands(be, 48)
    c = kind.upload(be, np.zeros((48, 48), np.float32))
    want = reference(x, y, None, 1.0, 0.0, False, False)
    for _ in range(3):  # the first makes the program, the next two find it by their key
        assert _close(_call(be, kind, a, b, c), want)
    assert keys_made[0] == 3 and api.CACHE.same.memo is not None
    for _ in range(3):
        assert _close(_call(be, kind, a, b, c), want)
    assert keys_made[0] == 3  # none made for these
    want2 = reference(x, y, None, 2.0, 0.0, False, False)
    assert _close(_call(be, kind, a, b, c, alpha=2.0), want2)  # another alpha: its own key
    assert keys_made[0] == 4


def test_an_array_changed_in_place_takes_the_key_again(every_backend, keys_made):
    be = every_backend
    n = 32
    kind, x, y, a, b = _operands(be, n)
    c = kind.upload(be, np.zeros((n, n), np.float32))
    for _ in range(3):
        _call(be, kind, a, b, c)
    made = keys_made[0]
    c.shape = (n // 2, 2 * n)  # C no longer fits the product: refused, not run on the memo
    with pytest.raises(ValueError):
        clgemm.gemm(a, b, c)
    assert keys_made[0] == made + 1


def test_new_arrays_each_call_are_not_remembered(every_backend, keys_made):
    be = every_backend
    n = 32
    kind, x, y, a, b = _operands(be, n)
    want = reference(x, y, None, 1.0, 0.0, False, False)
    for _ in range(4):
        c = kind.upload(be, np.full((n, n), np.nan, np.float32))
        out = clgemm.gemm(a, b, c)
        be.synchronize()
        assert _close(kind.download(out), want)
    assert keys_made[0] == 4 and api.CACHE.same.memo is None


def test_a_large_product_s_arrays_are_not_held(every_backend):
    be = every_backend
    n = 600  # A, B and C take 4.3 MB together, over ALIAS_MEMO_BYTES
    kind, x, y, a, b = _operands(be, n)
    c = kind.upload(be, np.zeros((n, n), np.float32))
    for _ in range(3):
        _call(be, kind, a, b, c)
    assert api.CACHE.same.memo is None and api.CACHE.same.seen is None


def test_clearing_the_caches_forgets_the_arrays(every_backend, keys_made):
    be = every_backend
    kind, x, y, a, b = _operands(be, 32)
    c = kind.upload(be, np.zeros((32, 32), np.float32))
    for _ in range(3):
        _call(be, kind, a, b, c)
    api.clear_caches()
    assert api.CACHE.same.memo is None and api.CACHE.same.seen is None
    assert _close(_call(be, kind, a, b, c), reference(x, y, None, 1.0, 0.0, False, False))
