"""The direct GEMM kernel (clgemm/kernels/direct.cl) on the default device: the BLAS SGEMM
C := alpha * op(A) * op(B) + beta * C with offsets, leading dimensions and all four
transpositions, on sizes no tile divides; C outside the matrix never written, C never read when
beta is 0; the file's own defaults; inconsistent parameters refused by name and by the compiler."""

from __future__ import annotations

import re

import numpy as np
import pytest

from clgemm.core import accuracy
from clgemm.core.errors import BuildError, ConstraintError
from clgemm.core.kernel_sources import kernel_source
from clgemm.core.paths import KERNELS
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs.direct import CPU_DEFAULTS, DIRECT, direct_geometry, direct_macros

#: the limits the defaults must also fit: an NVIDIA H100 as OpenCL/CUDA reports it
H100 = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                    local_mem_bytes=48 * 1024, device_type="GPU")

#: the GPU defaults, and a small set whose tile is not square (TSM != TSN, WPTM != WPTN), so that
#: a kernel mixing up M and N somewhere fails, with no padding of the local tiles
PARAM_SETS = {"defaults": {}, **{name: dict(form) for name, form in DIRECT.forms.items()}}
TRANS = [(False, False), (False, True), (True, False), (True, True)]

#: M N K: a single element, primes, more than one tile of either set along M and N with a
#: partial last tile, and K = 1
SIZES = [(1, 1, 1), (37, 23, 19), (70, 45, 33), (5, 9, 1)]

# Where each matrix sits in its buffer: element offset, extra rows of the leading dimension,
# and floats after the last column.
A_OFFSET, A_EXTRA = 5, 3
B_OFFSET, B_EXTRA = 2, 1
C_OFFSET, C_EXTRA = 3, 2
TAIL = 4
SENTINEL = np.float32(-12345.0)


def _stored(x: np.ndarray, offset: int, ld: int, fill: float) -> np.ndarray:
    """x (rows x cols) column-major at `offset` with leading dimension `ld`, `fill` around it."""
    rows, cols = x.shape
    flat = np.full(offset + ld * cols + TAIL, fill, np.float32)
    flat[offset:offset + ld * cols].reshape(cols, ld)[:, :rows] = x.T
    return flat


def _inside(offset: int, ld: int, rows: int, cols: int, size: int) -> np.ndarray:
    mask = np.zeros(size, bool)
    mask[offset:offset + ld * cols].reshape(cols, ld)[:, :rows] = True
    return mask


def _gemm(backend, macros, geometry, m, n, k, alpha, beta, trans_a, trans_b, seed,
          c_fill=None):
    """Run the kernel once on random operands. A and B are surrounded by NaN (so reading outside
    them shows), C by a sentinel. Returns (C inside the matrix, float64 reference, C's whole
    buffer before, after)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((k, m) if trans_a else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if trans_b else (k, n), dtype=np.float32)
    c = rng.standard_normal((m, n), dtype=np.float32) if c_fill is None else \
        np.full((m, n), c_fill, np.float32)
    lda, ldb, ldc = a.shape[0] + A_EXTRA, b.shape[0] + B_EXTRA, m + C_EXTRA
    flat_a = _stored(a, A_OFFSET, lda, np.nan)
    flat_b = _stored(b, B_OFFSET, ldb, np.nan)
    flat_c = _stored(c, C_OFFSET, ldc, SENTINEL)
    buf_a, buf_b, buf_c = (backend.to_device(x) for x in (flat_a, flat_b, flat_c))
    knl = backend.build(kernel_source(backend.header(), DIRECT.file), macros, DIRECT.kernel)
    gsize, lsize = geometry
    backend.launch(knl, gsize, lsize, [m, n, k, np.float32(alpha), np.float32(beta),
                                       buf_a, A_OFFSET, lda, buf_b, B_OFFSET, ldb,
                                       buf_c, C_OFFSET, ldc])
    out = backend.to_host(buf_c, flat_c.size)
    got = out[C_OFFSET:C_OFFSET + ldc * n].reshape(n, ldc)[:, :m].T
    op_a = (a.T if trans_a else a).astype(np.float64)
    op_b = (b.T if trans_b else b).astype(np.float64)
    ref = np.float64(np.float32(alpha)) * (op_a @ op_b)
    if beta != 0:
        ref += np.float64(np.float32(beta)) * c.astype(np.float64)
    return got, ref, flat_c, out, ldc


def _check(what, got, ref, before, after, m, n, ldc):
    assert np.isfinite(got).all(), f"{what}: {int((~np.isfinite(got)).sum())} non-finite"
    err = accuracy.relative_error(got, ref)
    assert err <= accuracy.TOLERANCE, f"{what}: relative error {err:.2e}"
    outside = ~_inside(C_OFFSET, ldc, m, n, before.size)
    assert np.array_equal(after[outside], before[outside]), f"{what}: wrote outside C"


@pytest.mark.parametrize("trans_a,trans_b", TRANS, ids=["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("name", PARAM_SETS)
def test_direct_gemm(backend, name, trans_a, trans_b):
    params = DIRECT.resolve(PARAM_SETS[name])
    DIRECT.validate(params, backend.device.limits())
    macros = direct_macros(params, trans_a, trans_b)
    for s, (m, n, k) in enumerate(SIZES):
        geometry = direct_geometry(params, m, n)
        # beta = 0 over a C full of NaN: the NaN must not reach the result
        got, ref, before, after, ldc = _gemm(backend, macros, geometry, m, n, k, 1.5, 0.0,
                                             trans_a, trans_b, seed=2 * s, c_fill=np.nan)
        _check(f"{name} {m}x{n}x{k} beta=0", got, ref, before, after, m, n, ldc)
        # beta != 0 with a random C
        got, ref, before, after, ldc = _gemm(backend, macros, geometry, m, n, k, -0.75, 0.5,
                                             trans_a, trans_b, seed=2 * s + 1)
        _check(f"{name} {m}x{n}x{k} beta=0.5", got, ref, before, after, m, n, ldc)


@pytest.mark.parametrize("name", PARAM_SETS)
def test_direct_alpha_zero_and_k_zero(backend, name):
    """alpha = 0 gives beta * C exactly; K = 0 gives beta * C, and 0 over NaN when beta = 0."""
    params = DIRECT.resolve(PARAM_SETS[name])
    macros = direct_macros(params, False, False)
    m, n = 37, 23
    geometry = direct_geometry(params, m, n)
    got, ref, before, after, ldc = _gemm(backend, macros, geometry, m, n, 19, 0.0, 2.5,
                                         False, False, seed=11)
    c = before[C_OFFSET:C_OFFSET + ldc * n].reshape(n, ldc)[:, :m].T
    assert np.array_equal(got, np.float32(2.5) * c), "alpha = 0: result is not beta * C"
    _check("alpha=0", got, ref, before, after, m, n, ldc)
    for k, beta in [(0, 0.5), (0, 0.0)]:
        got, ref, before, after, ldc = _gemm(backend, macros, geometry, m, n, k, 1.0, beta,
                                             False, False, seed=12,
                                             c_fill=np.nan if beta == 0 else None)
        if beta == 0:
            assert np.array_equal(got, np.zeros((m, n), np.float32)), "K = 0, beta = 0: not 0"
        _check(f"K=0 beta={beta}", got, ref, before, after, m, n, ldc)


def test_direct_cpu_defaults(backend):
    """The CPU parameter set (few work-items, 64 x 16 sums each) on 2 x 2 groups, both partial,
    with both operands transposed."""
    m, n, k = 130, 140, 37
    macros = direct_macros(CPU_DEFAULTS, True, True)
    got, ref, before, after, ldc = _gemm(backend, macros, direct_geometry(CPU_DEFAULTS, m, n),
                                         m, n, k, 0.5, -1.0, True, True, seed=31)
    _check("CPU defaults", got, ref, before, after, m, n, ldc)


def _file_defaults() -> dict[str, int]:
    """The `#ifndef NAME / #define NAME value` defaults of clgemm/kernels/direct.cl."""
    text = (KERNELS / DIRECT.file).read_text()
    return {name: int(value) for name, value in
            re.findall(r"#ifndef (\w+)\s*\n\s*#define \1 (\d+)", text)}


def test_direct_file_defaults_match_the_record():
    assert _file_defaults() == {**DIRECT.defaults(), "TRANS_A": 0, "TRANS_B": 0, "BATCHED": 0}


def test_direct_builds_and_runs_without_macros(backend):
    """The file alone, no -D at all: its own defaults (those of the record, checked above)."""
    params = DIRECT.defaults()
    m, n, k = 37, 23, 19
    got, ref, before, after, ldc = _gemm(backend, {}, direct_geometry(params, m, n), m, n, k,
                                         1.0, 0.0, False, False, seed=21, c_fill=np.nan)
    _check("no -D", got, ref, before, after, m, n, ldc)


def test_direct_macros_and_geometry():
    macros = direct_macros({"TSM": 32, "WPTM": 2}, True, False)
    assert macros == {**DIRECT.defaults(), "TSM": 32, "WPTM": 2, "TRANS_A": 1, "TRANS_B": 0}
    # 37 rows in tiles of 32 -> 2 groups of 16 work-items; 23 columns in tiles of 64 -> 1 of 16
    assert direct_geometry({"TSM": 32, "WPTM": 2}, 37, 23) == ((32, 16), (16, 16))
    assert direct_geometry({}, 1, 1) == ((16, 16), (16, 16))
    assert DIRECT.size_problem(DIRECT.defaults(), 37, 23, 1) is None
    assert not DIRECT.helpers_for(DIRECT.defaults()) and not DIRECT.transposed_b


@pytest.mark.parametrize("params", [DIRECT.defaults(), CPU_DEFAULTS,
                                    DIRECT.resolve(PARAM_SETS["small"])],
                         ids=["defaults", "cpu-defaults", "small"])
def test_direct_parameter_sets_are_valid(params, device):
    DIRECT.validate(params, H100)
    DIRECT.validate(params, device.limits())


@pytest.mark.parametrize("overrides,constraint", [
    ({"WPTM": 3}, "TSM % WPTM == 0"),
    ({"TSN": 32, "WPTN": 64}, "TSN % WPTN == 0"),
    # 256 work-items, a 2 x 16 tile of op(A): 32 elements cannot be shared out
    ({"TSM": 16, "TSN": 16, "TSK": 2, "WPTM": 1, "WPTN": 1},
     "TSK*TSM % work-items == 0 (whole A-tile loads)"),
    # 256 work-items, a 4 x 64 tile of op(A) (256 elements) but a 4 x 16 tile of op(B)
    ({"TSM": 64, "TSN": 16, "TSK": 4, "WPTM": 4, "WPTN": 1},
     "TSK*TSN % work-items == 0 (whole B-tile loads)"),
    ({"PAD": -1}, "parameters within their minimum values"),
])
def test_direct_constraints_by_name(overrides, constraint):
    params = {**DIRECT.defaults(), **overrides}
    with pytest.raises(ConstraintError) as info:
        DIRECT.validate(params)
    assert info.value.constraint == constraint


def test_direct_device_limits_by_name():
    tiny = DeviceLimits(max_work_group_size=128, max_work_item_sizes=(128, 128, 128),
                        local_mem_bytes=4096, device_type="GPU")
    with pytest.raises(ConstraintError) as info:
        DIRECT.validate(DIRECT.defaults(), tiny)   # 256 work-items
    assert info.value.constraint == "work-group size <= device maximum"
    big_tiles = DIRECT.resolve({"WPTM": 8, "WPTN": 8, "TSK": 32})   # 8 x 8 items, 16.6 KiB
    with pytest.raises(ConstraintError) as info:
        DIRECT.validate(big_tiles, tiny)
    assert info.value.constraint == "local memory <= device local memory"


def test_direct_gpu_register_heuristic():
    """Blocks of more than 64 sums are for CPUs: the tuner's heuristic stage drops them on GPUs."""
    cpu = DeviceLimits(device_type="CPU")
    assert DIRECT.first_violation(CPU_DEFAULTS, H100, stages=("heuristic",)).name == \
        "WPTM*WPTN <= 64 on GPUs (sums in registers)"
    assert DIRECT.first_violation(CPU_DEFAULTS, cpu, stages=("heuristic",)) is None
    assert DIRECT.first_violation(DIRECT.defaults(), H100, stages=("heuristic",)) is None


def test_direct_kernel_refuses_inconsistent_macros(backend):
    """The kernel's own #error checks, for parameters that never went through the record."""
    macros = {**direct_macros({}, False, False), "WPTM": 3}
    with pytest.raises(BuildError):
        backend.build(kernel_source(backend.header(), DIRECT.file), macros, DIRECT.kernel)
