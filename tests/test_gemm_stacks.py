"""Stacks of matrices through gemm() and matmul(): NumPy's broadcasting, transposes, alpha and
beta, a given C, device arrays read in place (views of stacks included), one launch for the
whole stack, chunks where the API limits a grid, and the refusals; checked against float64 with
the output poisoned first."""

from __future__ import annotations

import numpy as np
import pytest
from layouts import rand, starting_at

import clgemm
from clgemm.backends import KINDS, open_backend
from clgemm.core.errors import UsageError
from clgemm.library import gemm as api
from clgemm.library import stack_tiled
from clgemm.rungs.tiled import TILED, reads_b_itself


def _ref(a, b, ta=False, tb=False):
    a64 = np.swapaxes(a, -1, -2).astype(np.float64) if ta else a.astype(np.float64)
    b64 = np.swapaxes(b, -1, -2).astype(np.float64) if tb else b.astype(np.float64)
    return np.matmul(a64, b64)


def _close(got, want) -> bool:
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    return bool(got.shape == want.shape and np.isfinite(got).all()
                and (not got.size or np.abs(got - want).max() < 1e-4 * scale))


SHAPES = [((4, 17, 9), (4, 9, 5)), ((3, 17, 9), (9, 5)), ((17, 9), (2, 3, 9, 5)),
          ((2, 1, 8, 3), (4, 3, 6)), ((1, 33, 65), (5, 65, 7))]


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}@{s[1]}")
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True)])
def test_numpy_stacks_broadcast_as_matmul(device, shapes, trans):
    rng = np.random.default_rng(3)
    sa, sb = shapes
    ta, tb = trans
    a, b = rand(rng, sa), rand(rng, sb)
    a_in = np.ascontiguousarray(np.swapaxes(a, -1, -2)) if ta else a
    b_in = np.ascontiguousarray(np.swapaxes(b, -1, -2)) if tb else b
    want = _ref(a, b)
    assert _close(clgemm.gemm(a_in, b_in, trans_a=ta, trans_b=tb, device=device), want)
    c = np.full(want.shape, np.nan, np.float32)
    assert clgemm.gemm(a_in, b_in, c, trans_a=ta, trans_b=tb, device=device) is c
    assert _close(c, want)


def test_numpy_stacks_alpha_beta_and_strided_c(device):
    rng = np.random.default_rng(4)
    a, b = rand(rng, (6, 12, 7)), rand(rng, (6, 7, 10))
    big = rand(rng, (6, 24, 10), order="F")
    c = big[:, ::2]  # every second row, Fortran-ordered matrices: not contiguous
    c0 = c.astype(np.float64)
    out = clgemm.gemm(a, b, c, alpha=-2.0, beta=0.5, device=device)
    assert out is c and _close(c, -2.0 * _ref(a, b) + 0.5 * c0)
    zero_k = clgemm.gemm(rand(rng, (3, 4, 0)), rand(rng, (3, 0, 5)), device=device)
    assert zero_k.shape == (3, 4, 5) and not zero_k.any()
    assert clgemm.gemm(rand(rng, (0, 4, 3)), rand(rng, (3, 5)), device=device).shape == (0, 4, 5)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)),
                                    ((5, 2, 3), (3,)), ((3,), (5, 3, 4)),
                                    ((2, 1, 3, 4), (6, 4, 2))], ids=str)
def test_matmul_vectors_and_out(device, shapes):
    rng = np.random.default_rng(5)
    a, b = rand(rng, shapes[0]), rand(rng, shapes[1])
    want = np.matmul(a.astype(np.float64), b)
    got = clgemm.matmul(a, b, device=device)
    assert np.shape(got) == want.shape and _close(got, want)
    out = np.full(want.shape, np.nan, np.float32)
    assert clgemm.matmul(a, b, out, device=device) is out and _close(out, want)


def test_numpy_stacks_on_a_cpu_are_used_where_they_lie(device, monkeypatch):
    """On a CPU device a NumPy stack is read and, where C is not read (beta 0), written where
    it lies: nothing is copied to the device, a given C is the result, a new one is right; a C
    that is A itself goes through a buffer of its own and the answer stays right."""
    if not device.is_cpu:
        pytest.skip("a CPU device works in host memory")
    be = open_backend(device)
    rng = np.random.default_rng(8)
    # on the widest vector a stack's kernel reads (an operand off it is copied: its test is in
    # test_gemm_host_alignment.py)
    a, b = starting_at(rand(rng, (5, 24, 16))), starting_at(rand(rng, (5, 16, 8)))

    def copied(host):
        raise AssertionError(f"copied {host.size} floats to the device")
    monkeypatch.setattr(be, "to_device", copied)
    c = np.full((5, 24, 8), np.nan, np.float32)
    assert clgemm.gemm(a, b, c, backend=be) is c and _close(c, _ref(a, b))
    assert _close(clgemm.gemm(a, b, backend=be), _ref(a, b))
    assert _close(clgemm.gemm(a, b[0], backend=be), _ref(a, b[0]))  # B broadcast
    monkeypatch.undo()
    fortran = np.asfortranarray(np.full((5, 24, 8), np.nan, np.float32))  # written through a copy
    assert clgemm.gemm(a, b, fortran, alpha=3.0, backend=be) is fortran
    assert _close(fortran, 3.0 * _ref(a, b))
    square, eye = rand(rng, (3, 8, 8)), np.eye(8, dtype=np.float32)
    twice = 2 * eye
    want = _ref(square, twice)
    assert clgemm.gemm(square, twice, square, backend=be) is square
    assert _close(square, want)


def test_stack_refusals(device):
    rng = np.random.default_rng(6)
    a = rand(rng, (3, 4, 5))
    with pytest.raises(UsageError, match="do not broadcast"):
        clgemm.gemm(a, rand(rng, (2, 5, 6)), device=device)
    with pytest.raises(UsageError, match="must hold every product"):
        clgemm.gemm(a, rand(rng, (5, 6)), np.zeros((2, 4, 6), np.float32), device=device)
    with pytest.raises(UsageError, match="per product|op\\(a\\) @ op\\(b\\)"):
        clgemm.gemm(a, rand(rng, (5, 6)), np.zeros((4, 6), np.float32), device=device)
    with pytest.raises(UsageError, match="scalar"):
        clgemm.matmul(np.float32(2.0), a, device=device)


def test_device_stacks_one_launch_and_views(every_backend):
    """Device arrays are read in place, every product in one launch: a C-ordered stack, a view
    of every second matrix of a larger stack, and one B for all."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(7)
    big, b = rand(rng, (12, 33, 17)), rand(rng, (17, 9))
    dbig, db = kind.upload(be, big), kind.upload(be, b)
    with be.observe() as log:
        out = clgemm.gemm(dbig[::2], db)
    be.synchronize()
    assert len(log.records) == 1
    assert _close(kind.download(out), _ref(big[::2], b))
    dc = kind.upload(be, np.full((6, 33, 9), np.nan, np.float32))
    assert clgemm.gemm(dbig[1::2], db, dc) is dc
    be.synchronize()
    assert _close(kind.download(dc), _ref(big[1::2], b))


def test_device_stack_sharing_memory_with_c_is_refused(every_backend):
    be = every_backend
    kind = KINDS[be.name]
    s = kind.upload(be, rand(np.random.default_rng(8), (4, 8, 8)))
    with pytest.raises(UsageError, match="c shares memory with a"):
        clgemm.gemm(s, kind.upload(be, np.eye(8, dtype=np.float32)), s)


def test_repeated_stacked_calls(every_backend):
    """A stacked call whose signature was seen before binds its arrays to the one prepared
    launch: alternating operands, a given C and a new one, C-ordered and with B broadcast, each
    right; and a C that shares memory with A is refused on a repeated signature as on the first."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(10)
    sets = [(rand(rng, (5, 12, 7)), rand(rng, (7, 9))) for _ in range(2)]
    dev = [(kind.upload(be, a), kind.upload(be, b)) for a, b in sets]
    for rnd in range(3):
        for (a, b), (da, db) in zip(sets, dev):
            dc = kind.upload(be, np.full((5, 12, 9), np.nan, np.float32))
            assert clgemm.gemm(da, db, dc, alpha=1.0 + rnd) is dc
            new = clgemm.gemm(da, db)
            be.synchronize()
            assert _close(kind.download(dc), (1.0 + rnd) * _ref(a, b)), rnd
            assert _close(kind.download(new), _ref(a, b)), rnd
    square = [kind.upload(be, rand(rng, (4, 8, 8))) for _ in range(3)]
    eye = kind.upload(be, np.eye(8, dtype=np.float32))
    clgemm.gemm(square[0], eye, square[1])
    with pytest.raises(UsageError, match="c shares memory with a"):
        clgemm.gemm(square[2], eye, square[2])


@pytest.fixture
def tiled_stacks(stacks_on):
    """Stacks run on the tiled kernel at its defaults (through local memory, 128 x 128 tiles)
    wherever their sizes are multiples of its tiles, as a GPU's tuned database makes them."""
    return stacks_on(TILED.resolve({"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1}), False)


#: a configuration of the tiled kernel as one measured on a stack: it reads B as it lies
STACK_TUNED = {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1, "TSM": 32, "TSN": 32, "TSK": 8,
               "WPTM": 4, "WPTN": 4, "WIDTH": 4, "VWM": 4, "VWN": 4}


@pytest.fixture
def stack_tuned(stacks_on):
    """Stacks run on a configuration of the tiled kernel measured on a stack wherever their
    sizes are its tiles' multiples."""
    params = TILED.resolve(STACK_TUNED)
    assert reads_b_itself(params)
    return stacks_on(params, True)


def _sides(be, where: str):
    """Where a test's arrays live for the call (NumPy, or the backend's device arrays): how
    they are put there, read back, and the backend the call names."""
    kind = KINDS[be.name]
    if where == "device":
        return (lambda x: kind.upload(be, x)), kind.download, None
    return (lambda x: x), np.asarray, be


@pytest.mark.parametrize("where", ["numpy", "device"])
def test_a_stack_measured_as_a_stack_is_one_launch(every_backend, stack_tuned, where):
    """With a configuration measured on a stack, a C-ordered stack is one launch of the tiled
    kernel reading each product's B where it lies, B broadcast or not, B given transposed too;
    a B with a wider leading dimension than its rows goes through the pack; every product
    right, into a poisoned C, and a repeated call right with arrays of its own."""
    be = every_backend
    kind = KINDS[be.name]
    tm, tn, tk = stack_tuned
    put, get, named = _sides(be, where)
    rng = np.random.default_rng(31)
    m, n, k = 2 * tn, tm, 3 * tk  # C-ordered: the kernels see n x m
    for sa, sb, ta in [((4, m, k), (4, k, n), False), ((4, m, k), (k, n), False),
                       ((4, k, m), (4, k, n), True)]:
        a, b = rand(rng, sa), rand(rng, sb)
        for _ in range(2):
            c = put(np.full((4, m, n), np.nan, np.float32))
            with be.observe() as log:
                out = clgemm.gemm(put(a), put(b), c, trans_a=ta, backend=named)
            be.synchronize()
            assert [name for name, _ in log.times()] == ["gemm_tiled"], (sa, sb, ta)
            assert _close(get(out), _ref(a, b, ta=ta)), (sa, sb, ta)
    if where == "device":
        wide = rand(rng, (4, m, k + 4))  # A's rows k + 4 floats apart: B's columns to the kernel
        b = rand(rng, (4, k, n))
        with be.observe() as log:
            out = clgemm.gemm(kind.upload(be, wide)[:, :, :k], kind.upload(be, b))
        be.synchronize()
        assert [name for name, _ in log.times()] != ["gemm_tiled"]
        assert _close(kind.download(out), _ref(wide[:, :, :k], b))


@pytest.mark.parametrize("where", ["numpy", "device"])
def test_stacks_on_the_tiled_kernel(every_backend, tiled_stacks, where):
    """Products whose sizes are multiples of the tiled kernel's tiles run on its batched form:
    one pack that transposes every product's B and one launch for the whole stack, B broadcast
    or not; B given transposed is read where it lies; anything else (alpha, beta) stays on the
    direct kernel; and a repeated call binds its own arrays to the same launches."""
    be = every_backend
    kind = KINDS[be.name]
    tm, tn, tk = tiled_stacks
    put, get, named = _sides(be, where)
    rng = np.random.default_rng(12)
    m, n, k = tn, tm, 2 * tk  # C-ordered: the kernels see n x m
    for sa, sb in [((3, m, k), (3, k, n)), ((3, m, k), (k, n))]:
        a, b = rand(rng, sa), rand(rng, sb)
        with be.observe() as log:
            out = clgemm.gemm(put(a), put(b), backend=named)
        be.synchronize()
        assert [name for name, _ in log.times()] == ["pack_transpose", "gemm_tiled"]
        assert _close(get(out), _ref(a, b))
    # op(A) = A^T of a C-ordered K x M stack is the column-major BT the kernel reads
    a, b = rand(rng, (3, k, m)), rand(rng, (3, k, n))
    with be.observe() as log:
        out = clgemm.gemm(put(a), put(b), trans_a=True, backend=named)
    be.synchronize()
    assert [name for name, _ in log.times()] == ["gemm_tiled"]
    assert _close(get(out), _ref(a, b, ta=True))
    c = rand(rng, (3, m, n))
    want = 2.0 * _ref(a, b, ta=True) + 0.5 * c  # a NumPy c is written in place
    with be.observe() as log:
        out = clgemm.gemm(put(a), put(b), put(c), trans_a=True, alpha=2.0, beta=0.5,
                          backend=named)
    be.synchronize()
    assert [name for name, _ in log.times()] == ["gemm_direct"]
    assert _close(get(out), want)
    if where == "device":
        sets = [(rand(rng, (3, m, k)), rand(rng, (3, k, n))) for _ in range(2)]
        for _ in range(2):
            for x, y in sets:
                dc = kind.upload(be, np.full((3, m, n), np.nan, np.float32))
                assert clgemm.gemm(kind.upload(be, x), kind.upload(be, y), dc) is dc
                be.synchronize()
                assert _close(kind.download(dc), _ref(x, y))


@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_buffers_batched_on_the_tiled_kernel(every_backend, tiled_stacks, trans_b):
    """gemm_buffers_batched's products at multiples of the tiled kernel's tiles, tight and at
    offset 0, run on its batched form as gemm()'s stacks do; B stored transposed is read where
    it lies, otherwise one pack transposes every product's B; C between products untouched."""
    be = every_backend
    kind = KINDS[be.name]
    tm, tn, tk = tiled_stacks
    rng = np.random.default_rng(31)
    count, m, n, k, gap = 3, tm, tn, 2 * tk, 5
    a = rand(rng, (count, m, k))
    b = rand(rng, (count, n, k)) if trans_b else rand(rng, (count, k, n))
    flat = {"a": np.concatenate([x.ravel("F") for x in a]),
            "b": np.concatenate([x.ravel("F") for x in b])}
    c = np.full(count * (m * n + gap), -7.0, np.float32)
    dev = {name: kind.upload(be, x) for name, x in (*flat.items(), ("c", c))}
    bufs = {name: kind.buffer_of(x)[0] for name, x in dev.items()}
    with be.observe() as log:
        clgemm.gemm_buffers_batched(m, n, k, bufs["a"], bufs["b"], bufs["c"], batch=count,
                                    stride_c=m * n + gap, trans_b=trans_b, backend=be)
    be.synchronize()
    want = ["gemm_tiled"] if trans_b else ["pack_transpose", "gemm_tiled"]
    assert [name for name, _ in log.times()] == want
    got = kind.download(dev["c"])
    for p in range(count):
        at = p * (m * n + gap)
        product = got[at:at + m * n].reshape((m, n), order="F")
        assert _close(product, _ref(a[p], b[p], tb=trans_b)), p
        assert (got[at + m * n:at + m * n + gap] == -7.0).all()


def test_a_stack_larger_than_a_grid_is_split(every_backend, monkeypatch):
    """With a grid limited to 7 products along the third dimension (CUDA's is 65535), 20
    products take three launches and every one is right."""
    be = every_backend
    kind = KINDS[be.name]
    monkeypatch.setattr(be, "max_groups", (2**31 - 1, 65535, 7))
    rng = np.random.default_rng(9)
    a, b = rand(rng, (20, 9, 6)), rand(rng, (20, 6, 4))
    with be.observe() as log:
        out = clgemm.gemm(kind.upload(be, a), kind.upload(be, b))
    be.synchronize()
    assert len(log.records) == 3 and _close(kind.download(out), _ref(a, b))
    api.clear_caches()


@pytest.mark.parametrize("where", ["numpy", "device"])
def test_a_stack_without_a_product_scales_c(every_backend, where):
    """alpha = 0 (or K = 0): C := beta C, A and B unread, and with beta = 0 C is not read (its
    NaN does not propagate). The direct kernel is not launched with K = 0 for this, since PoCL
    3.1 once scaled part of C twice there."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(12)
    a, b, c = rand(rng, (3, 7, 4)), rand(rng, (3, 4, 5)), rand(rng, (3, 7, 5))
    put = (lambda x: x) if where == "numpy" else (lambda x: kind.upload(be, x))
    get = (lambda x: x) if where == "numpy" else kind.download
    out = clgemm.gemm(put(a), put(b), put(c.copy()), alpha=0.0, beta=3.14, backend=be)
    be.synchronize()
    assert _close(get(out), np.float32(3.14) * c.astype(np.float64))
    nan = np.full(c.shape, np.nan, np.float32)
    out = clgemm.gemm(put(a), put(b), put(nan), alpha=0.0, beta=0.0, backend=be)
    be.synchronize()
    assert not np.asarray(get(out)).any()


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("alpha", [1.5, 0.0])
def test_gemm_buffers_batched(every_backend, order, alpha):
    """Strided-batched on raw buffers: offsets, leading dimensions larger than the matrices,
    gaps between products, one B for all (stride 0), beta; each product checked, and what lies
    between the products of C untouched."""
    be = every_backend
    kind = KINDS[be.name]
    rng = np.random.default_rng(13)
    count, m, n, k, pad, gap = 4, 9, 6, 5, 2, 3
    rows = {"a": (m, k), "b": (k, n), "c": (m, n)}

    def ld(name):
        r, c = rows[name]
        return (r if order == "F" else c) + pad

    def extent(name):
        r, c = rows[name]
        return ld(name) * (c if order == "F" else r)

    mats = {name: rand(rng, (count, *rows[name])) for name in "abc"}
    stride = {"a": extent("a") + gap, "b": 0, "c": extent("c") + gap}
    flat = {}
    for name in "abc":
        buf = np.full(7 + count * max(stride[name], extent(name)) + extent(name), -7.0,
                      np.float32)
        for p in range(count if stride[name] else 1):
            r, c = rows[name]
            at = 7 + p * stride[name]
            block = np.full((c, ld(name)) if order == "F" else (r, ld(name)), -7.0, np.float32)
            block[:, :r if order == "F" else c] = mats[name][p].T if order == "F" else mats[name][p]
            buf[at:at + block.size] = block.reshape(-1)
        flat[name] = buf
    dev = {name: kind.upload(be, flat[name]) for name in "abc"}
    bufs = {name: kind.buffer_of(dev[name])[0] for name in "abc"}
    clgemm.gemm_buffers_batched(m, n, k, bufs["a"], bufs["b"], bufs["c"], batch=count,
                                stride_a=stride["a"], stride_b=0, stride_c=stride["c"],
                                alpha=alpha, beta=0.5, lda=ld("a"), ldb=ld("b"), ldc=ld("c"),
                                a_offset=7, b_offset=7, c_offset=7, order=order, backend=be)
    be.synchronize()
    got = kind.download(dev["c"])
    for p in range(count):
        at = 7 + p * stride["c"]
        block = got[at:at + extent("c")].reshape((n, ld("c")) if order == "F" else (m, ld("c")))
        c_p = block[:, :m].T if order == "F" else block[:, :n]
        want = alpha * _ref(mats["a"][p], mats["b"][0]) + 0.5 * mats["c"][p].astype(np.float64)
        assert _close(c_p, want)
        if p + 1 < count:
            assert (got[at + extent("c"):at + stride["c"]] == -7.0).all()
    with pytest.raises(UsageError, match="stride_c=.*reach|reach float"):
        clgemm.gemm_buffers_batched(m, n, k, bufs["a"], bufs["b"], bufs["c"], batch=count,
                                    stride_c=10**6, lda=ld("a"), ldb=ld("b"), ldc=ld("c"),
                                    order=order, backend=be)
