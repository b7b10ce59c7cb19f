"""C sharing memory with A or B on the device: the result is as if the operands were read
before C is written (as NumPy's matmul with an overlapping `out`), on every backend, through
gemm() on views and gemm_buffers() on one buffer. The extra copy that makes it so is made only
where C and an operand share a float, so blocks of one matrix (an LU update) cost nothing more.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from forced import force_direct
from layouts import embed, extract, rand, reference

import clgemm
from clgemm.backends import KINDS
from clgemm.backends.base import Mat
from clgemm.configs.configuration import user_config
from clgemm.library import gemm as api
from clgemm.library import hot_call, plan
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import CPU_MICRO_KERNEL, TILED


def _close(got, want) -> bool:
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max()))
    return bool(np.isfinite(got).all() and np.abs(got - want).max() < 1e-4 * scale)


@pytest.fixture
def kernel(request, monkeypatch):
    """The kernel gemm() runs: "direct", the direct kernel (which reads A and B while it writes
    C), whatever the lookup chain would choose; "packed", rung 5 at its defaults; "panels", the
    tiled kernel's CPU micro-kernel, both operands packed into panels in one launch;
    "self-packing", the tiled kernel's form that copies its own blocks of the operands where
    they lie; or "chosen", the chain's own choice."""
    if request.param == "direct":
        force_direct(monkeypatch)
    if request.param == "packed":
        def packed(device, shape):
            return user_config(device, 5, None)

        monkeypatch.setattr(api.CACHE, "choose", packed)
    if request.param == "panels":
        def panels(device, shape):
            return user_config(device, TILED.number, CPU_MICRO_KERNEL)

        monkeypatch.setattr(api.CACHE, "choose", panels)
    if request.param == "self-packing":
        def self_packing(device, shape):
            return user_config(device, TILED.number, TILED.forms["self-packing"])

        monkeypatch.setattr(api.CACHE, "choose", self_packing)
    api.clear_caches()
    yield request.param
    api.clear_caches()  # no plan of the forced choice outlives the test


CASES = ["c is a", "c is b", "c is a, beta", "c is a transposed", "c overlaps a view of a"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kernel,size", [("direct", 300), ("chosen", 300), ("chosen", 400),
                                         ("packed", 256), ("panels", 300),
                                         ("self-packing", 256)],
                         indirect=["kernel"])
def test_c_sharing_memory_with_an_operand(every_backend, kernel, size, case):
    """On the direct kernel, on gemm()'s own choice (the packed path at 400³ on a CPU) and on
    a rung at multiples of its tiles (which writes C itself where alpha is 1 and beta 0), the
    product of the operands as they were."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(size)
    s, t = rand(rng, (size, size)), rand(rng, (size, size))
    ds, dt = kind.upload(be, s), kind.upload(be, t)
    if case == "c is a":
        out, want = clgemm.gemm(ds, dt, ds), reference(s, t, None, 1.0, 0.0, False, False)
    elif case == "c is b":
        out, want = clgemm.gemm(ds, dt, out=dt), reference(s, t, None, 1.0, 0.0, False, False)
    elif case == "c is a, beta":
        out = clgemm.gemm(ds, dt, ds, alpha=2.0, beta=0.5)
        want = reference(s, t, s, 2.0, 0.5, False, False)
    elif case == "c is a transposed":  # A = S^T, a view of C's memory in the other order
        out = clgemm.gemm(ds.T, dt, ds)
        want = reference(s.T, t, None, 1.0, 0.0, False, False)
    else:  # A and C are column blocks of one wider matrix, half of them shared
        x = rand(rng, (size, 2 * size))
        dx = kind.upload(be, x)
        half = size // 2
        out = clgemm.gemm(dx[:, :size], dt, dx[:, half:half + size])
        want = reference(x[:, :size], t, None, 1.0, 0.0, False, False)
        be.synchronize()
        got = kind.download(dx)
        assert np.array_equal(got[:, :half], x[:, :half])  # outside C: unchanged
        assert _close(got[:, half:half + size], want)
        return
    be.synchronize()
    assert _close(kind.download(out), want)


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("rung", [None, 5])
@pytest.mark.parametrize("shift", [0, 5 * 304 + 7], ids=["c is a", "c inside a"])
@pytest.mark.parametrize("kernel", ["direct"], indirect=True)
def test_gemm_buffers_c_and_a_in_one_buffer(every_backend, kernel, order, rung, shift):
    """A at offset 3 and C at the same offset or inside A's span, in one buffer, leading
    dimensions larger than the matrices; B in a buffer of its own. Without `rung` the direct
    kernel runs; rung 5 forces the packed path."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(7)
    m, n, k = 300, 300, 300
    lda = ldc = 304
    a_off = 3
    c_off = a_off + shift
    a, b = rand(rng, (m, k)), rand(rng, (k, n))
    flat = np.full(c_off + ldc * 300, -7.0, np.float32)
    placed = embed(a, order, lda, a_off)
    flat[:placed.size] = placed
    c0 = extract(flat, (m, n), order, ldc, c_off).copy()
    arr = kind.upload(be, flat)
    buf = kind.buffer_of(arr)[0]
    b_arr = kind.upload(be, embed(b, order, k if order == "F" else n, 0))
    clgemm.gemm_buffers(m, n, k, buf, kind.buffer_of(b_arr)[0], buf, alpha=1.0, beta=1.0,
                        lda=lda, ldc=ldc, a_offset=a_off, c_offset=c_off, order=order,
                        backend=be, rung=rung)
    be.synchronize()
    got = kind.download(arr)
    assert _close(extract(got, (m, n), order, ldc, c_off), reference(a, b, c0, 1.0, 1.0, False,
                                                                     False))
    assert np.array_equal(got[:c_off], flat[:c_off])  # before C: unchanged


@pytest.mark.parametrize("kernel", ["direct", "chosen"], indirect=True)
def test_disjoint_blocks_of_one_matrix_are_not_copied(every_backend, kernel):
    """An LU trailing update, A22 -= A21 @ A12, all three blocks of one matrix: right, and no
    more launches than the same call on blocks of different matrices. C truly sharing A's
    memory costs one launch more on the direct kernel, none on the packed path."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(11)
    n = 48
    x, y = rand(rng, (2 * n, 2 * n)), rand(rng, (2 * n, 2 * n))
    dx, dy = kind.upload(be, x), kind.upload(be, y)

    def launches(a, b, c) -> int:
        with be.observe() as log:
            clgemm.gemm(a, b, c, alpha=-1.0, beta=1.0)
        be.synchronize()
        return len(log.records)

    blocks = launches(dx[n:, :n], dx[:n, n:], dx[n:, n:])
    want = reference(x[n:, :n], x[:n, n:], x[n:, n:], -1.0, 1.0, False, False)
    assert _close(kind.download(dx)[n:, n:], want)
    apart = launches(dy[n:, :n], dy[:n, n:], dx[:n, :n])
    assert blocks == apart
    shared = launches(dy[n:, n:], dy[:n, n:], dy[n:, n:])
    direct = api.choose_kernel(be.device, n, n, n).rung == DIRECT.number
    assert shared == apart + (1 if direct else 0)
    assert direct or kernel == "chosen"


class _Flat:
    """A stand-in adapter: every buffer is one memory, offsets count floats."""

    @staticmethod
    def memory_range(buf, offset, count):
        return buf, 4 * offset, 4 * (offset + count)


def test_shares_memory_is_exact_for_one_leading_dimension():
    """Against the sets of floats each matrix covers, over small layouts: exact where the
    leading dimensions agree, never missing a shared float where they differ."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        rows, cols, m, n = (int(v) for v in rng.integers(1, 5, 4))
        ld_x = rows + int(rng.integers(0, 3))
        ld_c = ld_x if rng.random() < 0.7 else m + int(rng.integers(0, 3))
        ld_c = max(ld_c, m)
        x_off, c_off = (int(v) for v in rng.integers(0, 30, 2))
        cover_x = {x_off + i + j * ld_x for i, j in itertools.product(range(rows), range(cols))}
        cover_c = {c_off + i + j * ld_c for i, j in itertools.product(range(m), range(n))}
        shared = bool(cover_x & cover_c)
        got = plan.shares_memory(_Flat(), Mat("buf", x_off, ld_x, False), rows, cols,
                                 Mat("buf", c_off, ld_c, False), m, n)
        layout = (rows, cols, ld_x, x_off, m, n, ld_c, c_off)
        if ld_x == ld_c:
            assert got == shared, layout
        else:
            assert got or not shared, layout
        assert not plan.shares_memory(_Flat(), Mat("buf", x_off, ld_x, False), rows, cols,
                                      Mat("other", c_off, ld_c, False), m, n)


def _three_on_device(be, seed: int, n: int):
    """Three n x n operands, as NumPy arrays and on the backend's device, with its adapter."""
    kind = KINDS[be.name]
    rng = np.random.default_rng(seed)
    host = [rand(rng, (n, n)) for _ in range(3)]
    return kind, host, [kind.upload(be, x) for x in host]


@pytest.mark.parametrize("kernel", ["direct", "chosen"], indirect=True)
def test_a_repeated_signature_still_finds_c_sharing_memory(every_backend, kernel):
    """A repeated call takes the remembered program (`HotCall`); the same signature fits a C of
    its own and a C that is A, so the second must still see the overlap and copy A first."""
    be = every_backend
    kind, (s, t, _), (ds, dt, du) = _three_on_device(be, 5, 96)
    for _ in range(2):  # apart: the first call makes the program, the second takes it
        clgemm.gemm(ds, dt, du)
    assert api.CACHE.hot, "the call on device arrays was not remembered"
    if kernel == "direct":  # one launch into a given C: the shortest way (`HotCall.quick`)
        assert all(h.quick is not None for h in api.CACHE.hot.values())
    be.synchronize()
    assert _close(kind.download(du), reference(s, t, None, 1.0, 0.0, False, False))
    out = clgemm.gemm(ds, dt, ds)  # the same signature, C now A itself
    be.synchronize()
    assert _close(kind.download(out), reference(s, t, None, 1.0, 0.0, False, False))


@pytest.mark.parametrize("kernel", ["direct"], indirect=True)
@pytest.mark.parametrize("small", [True, False])
def test_a_repeated_call_asks_where_its_buffers_lie_once(every_backend, kernel, monkeypatch,
                                                         small):
    """A small product's repeated call holds the buffers it found apart and knows them again
    by identity (`HotCall._quick_with`), so the driver is asked once; a larger one holds none
    and asks every time. Either way a C that is A, on the same signature, is still seen."""
    if not small:
        monkeypatch.setattr(hot_call, "ALIAS_MEMO_BYTES", 0)
    be = every_backend
    kind, (s, t, _), (ds, dt, du) = _three_on_device(be, 6, 64)
    clgemm.gemm(ds, dt, du)  # the full path: the program, and the call remembered
    asked = []
    original = hot_call.HotCall._may_share
    monkeypatch.setattr(hot_call.HotCall, "_may_share",
                        lambda self, a, b, c: asked.append(1) or original(self, a, b, c))
    api.CACHE.hot.clear()  # remembered anew, with the counting check
    clgemm.gemm(ds, dt, du)
    for _ in range(4):
        clgemm.gemm(ds, dt, du)
    assert len(asked) == (1 if small else 4)
    out = clgemm.gemm(ds, dt, ds)  # the same signature, C now A itself
    be.synchronize()
    st = kind.download(out)
    assert _close(st, reference(s, t, None, 1.0, 0.0, False, False))
    clgemm.gemm(ds, dt, du)  # apart again: A now holds the product before
    be.synchronize()
    assert _close(kind.download(du), reference(st, t, None, 1.0, 0.0, False, False))
