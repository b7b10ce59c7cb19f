"""`clgemm verify`: a conformance sweep of the BLAS entry points on one device.

The ladder checks each rung on one square problem with tight, column-major inputs. A caller of
`gemm` or `gemm_buffers` can hand over far more: sizes of 1 and sizes no tile divides, leading
dimensions larger than the matrix, offsets, transposes, row-major storage, alpha and beta of 0,
1 or anything else, C in place, strided NumPy views, device-array views (pyopencl on OpenCL,
CuPy on CUDA). The sweep crosses these the way CLBlast's correctness tests do, for every rung at
its default (and tuned) configuration at the sizes it supports, and for `gemm()`'s own kernel
choice. It runs on either backend: every case goes through the backend interface and the
array adapters, as `gemm` itself does.

Each case is checked three ways: the matrix part of C against a float64 reference (relative
Frobenius error, `accuracy.TOLERANCE`); everything in C's buffer outside the matrix (the padding
between columns and before the offset) still holding its sentinel, which catches stray writes;
and, when beta == 0, C filled with NaN beforehand, which catches a C that is read although BLAS
says it must not be. Failing cases are written to JSON with everything needed to run them again
(`clgemm verify --replay FILE`): the inputs come from a seeded generator.
"""

from __future__ import annotations

import itertools
import json
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Literal

import numpy as np

from clgemm.backends import KINDS, array_libraries, array_library
from clgemm.configs import lookup
from clgemm.configs.configuration import Config, Trial, verify_candidates
from clgemm.core import accuracy
from clgemm.core.errors import ClgemmError, UsageError
from clgemm.core.files import read_json_list
from clgemm.core.memory_fit import check_host_memory, checking_bytes
from clgemm.core.problem import Problem
from clgemm.core.tables import (BRIEF_NOTE, FULL, Bad, Column, Layout, fit_lines, params_brief,
                                params_text, render)
from clgemm.devices.info import DeviceInfo
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs import get_rung, kernel_label

#: sizes in the spirit of CLBlast's tests: 1, an odd prime, a power of two, one past it
SIZES = (1, 7, 64, 129)
SIZES_FULL = (1, 7, 64, 129, 256)
ALPHAS = (0.0, 1.0, 3.14)
BETAS = (0.0, 1.0, 3.14)
#: (extra leading dimension, offset) pairs: tight; padded with an offset; and tight one float
#: into its allocation, where a gemm() array starts off every vector a kernel reads
LD_OFFSETS = ((0, 0), (3, 5), (0, 1))
#: what C's buffer holds outside the matrix; any change there is a stray write
SENTINEL = np.float32(-12345.0)
FORMAT = "clgemm-verify-failures"
#: the "format" of what `clgemm verify --json` writes
REPORT_FORMAT = "clgemm-verify"


@dataclass
class Case:
    """One call and its inputs, complete enough to be run again from JSON.

    path: "buffers" (gemm_buffers with a forced rung), "numpy" (gemm on NumPy arrays, kernel
    chosen by gemm), "pyopencl" or "cupy" (gemm on the backend's device arrays). order: "F"
    or "C", the storage of all three matrices. ld_pad / offset: for buffers, extra leading
    dimension and element offset (A at offset, B at 2*offset, C at 3*offset); for arrays, the
    operands are views into larger arrays with that much margin. c_given: False passes no c
    (beta is then 0)."""

    path: str
    m: int
    n: int
    k: int
    trans_a: bool = False
    trans_b: bool = False
    order: str = "F"
    alpha: float = 1.0
    beta: float = 0.0
    ld_pad: int = 0
    offset: int = 0
    c_given: bool = True
    rung: int | None = None
    params: dict[str, int] | None = None
    source: str = "auto"
    seed: int = 0
    #: products of a stack ("stacks" paths), B repeated for all of them where the seed is odd
    batch: int = 0

    def label(self) -> str:
        t = ("T" if self.trans_a else "N") + ("T" if self.trans_b else "N")
        stack = f"{self.batch} x " if self.batch else ""
        return (f"{self.path} {stack}{self.m}x{self.n}x{self.k} {t} order={self.order} "
                f"alpha={self.alpha} beta={self.beta} ld+{self.ld_pad} off={self.offset}"
                f"{'' if self.c_given else ' no-c'}")


@dataclass
class CaseResult:
    case: Case
    ok: bool
    rel_error: float | None = None
    message: str = ""


@dataclass
class Group:
    """The cases of one table row: one kernel configuration on one path."""

    name: str
    path: str
    kernel: str
    source: str
    results: list[CaseResult] = field(default_factory=list)
    seconds: float = 0.0
    skipped: str = ""
    #: the kernel and its parameters, for a group of one rung's configuration
    rung: int | None = None
    params: dict[str, int] | None = None

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.ok]


# -- building and checking one case ------------------------------------------------------------
def _stored_shapes(case: Case) -> dict[str, tuple[int, int]]:
    m, n, k = case.m, case.n, case.k
    return {"a": (k, m) if case.trans_a else (m, k), "b": (n, k) if case.trans_b else (k, n),
            "c": (m, n)}


def _inputs(case: Case) -> dict[str, np.ndarray]:
    """The logical matrices A, B, C (as stored, before op), from the case's seed. C is NaN when
    beta == 0, so that reading it shows."""
    rng = np.random.default_rng(case.seed)
    out = {name: rng.standard_normal(shape, dtype=np.float32)
           for name, shape in _stored_shapes(case).items()}
    if case.beta == 0:
        out["c"][...] = np.nan
    return out


def _terms(case: Case, x: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(alpha op(A) op(B), beta C) in float64, each term of the reference apart."""
    a = x["a"].astype(np.float64)
    b = x["b"].astype(np.float64)
    a = a.T if case.trans_a else a
    b = b.T if case.trans_b else b
    product = np.zeros((case.m, case.n))
    if case.alpha != 0 and case.k > 0:
        product += np.float64(np.float32(case.alpha)) * (a @ b)
    scaled_c = np.zeros((case.m, case.n))
    if case.beta != 0:
        scaled_c += np.float64(np.float32(case.beta)) * x["c"].astype(np.float64)
    return product, scaled_c


def _judge(case: Case, out: np.ndarray, x: dict[str, np.ndarray],
           outside_ok: bool) -> CaseResult:
    """The result against its float64 reference, the error measured against the size of the
    reference's two terms: where alpha A B and beta C nearly cancel, a float32 result rounds
    each term by about 1e-7 of its own size, which is far more than 1e-7 of their small sum
    (1 x 1 x 1, alpha = beta = 3.14: terms of 5.57 with a sum of 1.8e-4)."""
    if not outside_ok:
        return CaseResult(case, False, None, "C's buffer changed outside the matrix (stray write)")
    product, scaled_c = _terms(case, x)
    err = (accuracy.relative_error(out, product + scaled_c,
                                   magnitude=np.abs(product) + np.abs(scaled_c))
           if out.size else 0.0)
    if not err <= accuracy.TOLERANCE:
        holes = accuracy.unwritten_count(out)
        why = (f"{holes} of {out.size} elements NaN (unwritten, or C read with beta=0)" if holes
               else f"relative error {err:.2e} > {accuracy.TOLERANCE:.0e}")
        return CaseResult(case, False, err, why)
    return CaseResult(case, True, err)


def _embed(x: np.ndarray, order: str, pad: int, offset: int,
           fill: float | np.float32) -> np.ndarray:
    """`x` stored in a flat buffer: `order` layout, leading dimension padded by `pad`, starting at
    `offset`; everything else is `fill`."""
    rows, cols = x.shape
    inner, outer = (rows, cols) if order == "F" else (cols, rows)
    ld = max(1, inner) + pad
    flat = np.full(offset + ld * max(outer, 1), fill, dtype=np.float32)
    if x.size:
        view = flat[offset:offset + ld * outer].reshape(outer, ld)[:, :inner]
        view[...] = x.T if order == "F" else x
    return flat


def _unembed(flat: np.ndarray, shape: tuple[int, int], order: str, pad: int,
             offset: int) -> tuple[np.ndarray, np.ndarray]:
    """The matrix read back from `_embed`'s layout, and a mask of the buffer outside it."""
    rows, cols = shape
    inner, outer = (rows, cols) if order == "F" else (cols, rows)
    ld = max(1, inner) + pad
    inside = np.zeros(flat.shape, dtype=bool)
    inside[offset:offset + ld * outer].reshape(outer, ld)[:, :inner] = True
    view = flat[offset:offset + ld * outer].reshape(outer, ld)[:, :inner]
    return (view.T if order == "F" else view).copy(), ~inside


def _run_buffers(backend: Any, case: Case) -> CaseResult:
    x = _inputs(case)
    flats, bufs = {}, {}
    for i, name in enumerate("abc"):
        flats[name] = _embed(x[name], case.order, case.ld_pad, (i + 1) * case.offset, SENTINEL)
        bufs[name] = backend.to_device(flats[name])

    def ld(name: str) -> int:
        rows, cols = _stored_shapes(case)[name]
        return max(1, rows if case.order == "F" else cols) + case.ld_pad

    api.gemm_buffers(case.m, case.n, case.k, bufs["a"], bufs["b"], bufs["c"],
                     alpha=case.alpha, beta=case.beta, trans_a=case.trans_a,
                     trans_b=case.trans_b, lda=ld("a"), ldb=ld("b"), ldc=ld("c"),
                     a_offset=case.offset, b_offset=2 * case.offset, c_offset=3 * case.offset,
                     order=case.order, backend=backend, rung=case.rung, params=case.params)
    got = backend.to_host(bufs["c"], flats["c"].size)
    out, outside = _unembed(got, (case.m, case.n), case.order, case.ld_pad, 3 * case.offset)
    return _judge(case, out, x,
                  bool(np.array_equal(got[outside], flats["c"][outside])))


def _window(big: Any, shape: tuple[int, int], order: str, pad: int, offset: int) -> Any:
    """The matrix's view into `big`, a NumPy or device array laid out as `_host_view` lays it
    out: a tight matrix with an offset is contiguous, `offset` floats into a flat array; any
    other is a window `offset` rows and columns into a larger matrix."""
    rows, cols = shape
    if pad == 0 and offset:
        return big[offset:offset + rows * cols].reshape((rows, cols), order=order)
    return big[offset:offset + rows, offset:offset + cols]


def _host_view(x: np.ndarray, order: str, pad: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """`x` as a view into a larger array (`_window`), which holds the sentinel elsewhere."""
    rows, cols = x.shape
    layout: Literal["C", "F"] = "F" if order == "F" else "C"
    if pad == 0 and offset:
        big = np.full(rows * cols + 2 * offset, SENTINEL, dtype=np.float32)
    else:
        big = np.full((rows + offset + pad, cols + offset + pad), SENTINEL, dtype=np.float32,
                      order=layout)
    view = _window(big, (rows, cols), order, pad, offset)
    view[...] = x
    return big, view


def _outside(shape: tuple[int, ...], case: Case) -> np.ndarray:
    """Where the larger array around C lies outside C, as a mask of its shape."""
    mask = np.ones(shape, dtype=bool)
    _window(mask, (case.m, case.n), case.order, case.ld_pad, case.offset)[...] = False
    return mask


def _run_numpy(backend: Any, case: Case) -> CaseResult:
    x = _inputs(case)
    views = {name: _host_view(x[name], case.order, case.ld_pad, case.offset) for name in "abc"}
    before = views["c"][0].copy()
    c = views["c"][1] if case.c_given else None
    out = api.gemm(views["a"][1], views["b"][1], c, alpha=case.alpha,
                   beta=case.beta if case.c_given else 0.0, trans_a=case.trans_a,
                   trans_b=case.trans_b, backend=backend)
    if case.c_given and out is not c:
        return CaseResult(case, False, None, "gemm did not return c itself")
    mask = _outside(before.shape, case)
    outside_ok = np.array_equal(views["c"][0][mask], before[mask])
    return _judge(case, np.asarray(out), x, bool(outside_ok))


def _run_device_arrays(backend: Any, case: Case) -> CaseResult:
    """gemm() on the backend's own device arrays (views into larger ones), read in place. The
    path of each backend is named after its array library (`registry.array_library`)."""
    if array_library(backend.name) != case.path or backend.name not in KINDS:
        return CaseResult(case, False, None, f"a {case.path} case cannot run on the "
                          f"{backend.name} backend")
    kind = KINDS[backend.name]
    x = _inputs(case)
    dev = {}
    for name in "abc":
        big, _ = _host_view(x[name], case.order, case.ld_pad, case.offset)
        d = kind.upload(backend, big)
        dev[name] = (big, d, _window(d, x[name].shape, case.order, case.ld_pad, case.offset))
    c = dev["c"][2] if case.c_given else None
    out = api.gemm(dev["a"][2], dev["b"][2], c, alpha=case.alpha,
                   beta=case.beta if case.c_given else 0.0, trans_a=case.trans_a,
                   trans_b=case.trans_b, backend=backend)
    if not kind.is_array(out):
        return CaseResult(case, False, None, f"result is a {type(out).__name__}, not a "
                          f"{kind.label} array")
    if case.c_given and out is not c:
        return CaseResult(case, False, None, "gemm did not return c itself")
    outside_ok = True
    if case.c_given:
        before, after = dev["c"][0], kind.download(dev["c"][1])
        mask = _outside(before.shape, case)
        outside_ok = bool(np.array_equal(after[mask], before[mask]))
        result = _window(after, (case.m, case.n), case.order, case.ld_pad, case.offset)
    else:
        result = kind.download(out)
    return _judge(case, result, x, outside_ok)


def _stack(x: np.ndarray, order: str, pad: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """A stack of matrices inside a larger stack (margin `offset` before, `pad` more after, so
    the matrices are views with a larger leading dimension), each matrix in `order`; (the
    larger stack, the view)."""
    p, r, c = x.shape
    big = np.full((p, r + offset + pad, c + offset + pad), SENTINEL, np.float32)
    if order == "F":  # every matrix Fortran-ordered, the stack one stride apart
        big = np.swapaxes(np.ascontiguousarray(np.swapaxes(big, -1, -2)), -1, -2)
    big[:, offset:offset + r, offset:offset + c] = x
    return big, big[:, offset:offset + r, offset:offset + c]


def _run_stacks(backend: Any, case: Case) -> CaseResult:
    """gemm() on stacks: NumPy's ("stacks") or the backend's device arrays ("<library>-stacks"),
    B repeated for every product where the seed is odd, each product checked on its own."""
    device = case.path != "stacks"
    kind = KINDS.get(backend.name) if device else None
    if device and (kind is None or case.path != f"{array_library(backend.name)}-stacks"):
        return CaseResult(case, False, None, f"a {case.path} case cannot run on the "
                          f"{backend.name} backend")
    rng = np.random.default_rng(case.seed)
    shapes = _stored_shapes(case)
    count = {"a": case.batch, "b": 1 if case.seed % 2 else case.batch, "c": case.batch}
    x = {name: rng.standard_normal((count[name], *shapes[name]), dtype=np.float32)
         for name in "abc"}
    if case.beta == 0:
        x["c"][...] = np.nan
    views = {name: _stack(x[name], case.order, case.ld_pad, case.offset) for name in "abc"}
    args = {name: views[name][1] for name in "abc"}
    up: dict[str, Any] = {}
    if kind is not None:  # the larger stacks uploaded in their memory order, viewed alike
        o = case.offset
        for name in "abc":
            big = views[name][0]
            f_order = case.order == "F"
            up[name] = kind.upload(backend, np.swapaxes(big, -1, -2) if f_order else big)
            whole = up[name].transpose((0, 2, 1)) if f_order else up[name]
            args[name] = whole[:, o:o + shapes[name][0], o:o + shapes[name][1]]
    c = args["c"] if case.c_given else None
    out = api.gemm(args["a"], args["b"], c, alpha=case.alpha,
                   beta=case.beta if case.c_given else 0.0, trans_a=case.trans_a,
                   trans_b=case.trans_b, backend=backend)
    if case.c_given and out is not c:
        return CaseResult(case, False, None, "gemm did not return c itself")
    if kind is None:
        got = np.asarray(out)
    elif not case.c_given:
        got = kind.download(out)
    else:  # read back the whole larger stack, and view it as C was
        whole = kind.download(up["c"])
        whole = np.swapaxes(whole, -1, -2) if case.order == "F" else whole
        o = case.offset
        got = whole[:, o:o + case.m, o:o + case.n]
    worst = CaseResult(case, True, 0.0)
    for p in range(case.batch):
        one = {"a": x["a"][p], "b": x["b"][min(p, count["b"] - 1)], "c": x["c"][p]}
        result = _judge(case, got[p], one, True)
        if not result.ok:
            return result
        worst = max(worst, result, key=lambda r: r.rel_error or 0.0)
    return worst


def _run_stack_form(backend: Any, case: Case) -> CaseResult:
    """A kernel's batched form for a stack, as the tuner measures it and gemm() runs a stack
    stored for it (the tiled kernel's reads each product's B where it lies): every product
    checked against float64 with C poisoned first (`rung_runner.run_rung`)."""
    if case.rung is None or case.params is None or case.batch < 1:
        return CaseResult(case, False, None, "a stack-form case names a rung, its parameters "
                          "and a batch")
    rung = get_rung(case.rung)
    params = rung.resolve(case.params)
    rung.validate(params, backend.device.limits())
    ws = Workspace(backend, Problem(case.m, case.n, case.k, batch=case.batch), seed=case.seed)
    res = run_rung(backend, ws, rung, params, repeats=1, warmup=0)
    return CaseResult(case, res.ok, res.rel_error, "" if res.ok else res.message)


RUNNERS: dict[str, Callable[[Any, Case], CaseResult]] = {
    "buffers": _run_buffers, "numpy": _run_numpy, "stacks": _run_stacks,
    "stack-form": _run_stack_form,
    **{path: _run_device_arrays for path in array_libraries().values()},
    **{f"{path}-stacks": _run_stacks for path in array_libraries().values()}}


def run_case(backend: Any, case: Case) -> CaseResult:
    """Run one case; a refusal or a failure becomes a failing result, never an exception."""
    if case.path not in RUNNERS:
        return CaseResult(case, False, None, f"unknown path '{case.path}'")
    try:
        with backend.activate():  # buffers made for the case go to the backend's device
            return RUNNERS[case.path](backend, case)
    except ClgemmError as exc:
        return CaseResult(case, False, None, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # an OpenCL error surfaced by pyopencl, say: record, carry on
        return CaseResult(case, False, None, f"{type(exc).__name__}: {exc}")


# -- the sweep ---------------------------------------------------------------------------------
def _combos(quick: bool) -> Iterator[tuple[str, bool, bool, float, float, int, int]]:
    """(order, trans_a, trans_b, alpha, beta, ld_pad, offset). The full sweep crosses them all.
    The quick one takes every order and transpose pair and rotates alpha/beta and ld/offset
    through them, so each value still appears, in fewer combinations."""
    layouts = list(itertools.product("FC", (False, True), (False, True)))
    scalars = list(itertools.product(ALPHAS, BETAS))
    if not quick:
        for lay, (al, be), (pad, off) in itertools.product(layouts, scalars, LD_OFFSETS):
            yield (*lay, al, be, pad, off)
        return
    # Stride 4 through the 9 scalar pairs (coprime with 9) visits all of them in 9 steps.
    for i, lay in enumerate(layouts + layouts[:1]):
        al, be = scalars[(4 * i + 1) % len(scalars)]
        pad, off = LD_OFFSETS[(i // 2) % len(LD_OFFSETS)]
        yield (*lay, al, be, pad, off)


def _rung_sizes(rung_number: int, params: dict[str, int],
               quick: bool) -> list[tuple[int, int, int]]:
    """Sizes from SIZES that the configuration supports, per dimension; where none do, the tile
    itself (and in the full sweep, twice the tile too)."""
    rung = get_rung(rung_number)
    sizes = SIZES if quick else SIZES_FULL
    dims = []
    for mult in rung.size_multiples(params):
        ok = [s for s in sizes if s % mult == 0] or [mult]
        if not quick and 2 * mult not in ok and len(ok) < 3:
            ok.append(2 * mult)
        dims.append(ok)
    if quick:
        if rung.any_size:
            return [(1, 1, 1), (7, 129, 64), (129, 7, 7)]
        return [(dims[0][-1], dims[1][0], dims[2][-1])]
    dm, dn, dk = dims
    triples = list(itertools.product(dm, dn, dk))
    if len(triples) > 12:  # keep the corners and the diagonal, not the whole cube
        keep = {(d0[i % len(d0)], d1[i % len(d1)], d2[i % len(d2)])
                for d0, d1, d2 in [dims] for i in range(max(map(len, dims)))}
        keep |= {(dims[0][0], dims[1][-1], dims[2][0]), (dims[0][-1], dims[1][0], dims[2][-1])}
        triples = sorted(keep)
    return triples


def _gemm_sizes(quick: bool) -> list[tuple[int, int, int]]:
    """The automatic path: every size edge case, empty ones included."""
    base = [(0, 5, 3), (4, 0, 3), (5, 4, 0), (1, 1, 1), (7, 7, 7), (64, 64, 64), (129, 64, 7),
            (7, 129, 65)]
    return base if quick else base + [(1, 129, 64), (129, 1, 1), (256, 129, 64), (65, 65, 129)]


def _configs(device: DeviceInfo, rungs: list[int], quick: bool) -> list[tuple[int, dict, str]]:
    """(rung, params, source): each rung's defaults, and every distinct configuration the
    lookup chain would run at the sweep's sizes, whatever level it comes from."""
    shapes = [(s, s, s) for s in (SIZES if quick else SIZES_FULL)]
    return [(c.rung, dict(c.params), c.source) for number in rungs
            for c in verify_candidates(device, number, shapes)]


def plan_cases(device: DeviceInfo, rungs: list[int], quick: bool,
               include_api: bool = True) -> list[tuple[Group, list[Case]]]:
    """Every group of the sweep with its cases, before anything runs."""
    groups: list[tuple[Group, list[Case]]] = []
    limits = device.limits()
    for number, params, source in _configs(device, rungs, quick):
        rung = get_rung(number)
        text = rung.params_text(params)
        group = Group(kernel_label(number), "buffers", text, source, rung=number, params=params)
        bad = rung.first_violation(params, limits)
        if bad is not None:
            group.skipped = f"breaks '{bad.name}' on this device"
            groups.append((group, []))
            continue
        cases = []
        for m, n, k in _rung_sizes(number, params, quick):
            for order, ta, tb, al, be, pad, off in _combos(quick):
                cases.append(Case("buffers", m, n, k, ta, tb, order, al, be, pad, off, True,
                                  number, dict(params), source))
        groups.append((group, _seeded(cases)))
    groups += _stack_form_groups(device, rungs, quick)
    if not include_api:
        return groups
    device_path = array_library(device.backend)
    for path in ("numpy", *([device_path] if device_path is not None else [])):
        group = Group(f"gemm() {path}", path, "chosen by gemm()", "auto")
        cases = []
        sizes = _gemm_sizes(quick) if path == "numpy" else _gemm_sizes(True)[3:]
        combos = list(_combos(quick or path != "numpy"))
        for i, (m, n, k) in enumerate(sizes):
            for j, (order, ta, tb, al, be, pad, off) in enumerate(combos):
                c_given = (i + j) % 4 != 0 or be != 0
                cases.append(Case(path, m, n, k, ta, tb, order, al, be, pad, off, c_given,
                                  None, None, "auto"))
        groups.append((group, _seeded(cases)))
    return groups + _stack_groups(device_path)


def _seeded(cases: list[Case]) -> list[Case]:
    """The cases of one group, each seeded from what it is (its call, its kernel and
    configuration) and its place in the group, so that a case's inputs stay the same whatever
    else the sweep holds: a failure found once is found again by the next sweep, though a new
    stored configuration adds groups before it. The place's parity is the seed's, so that a
    stack's cases keep alternating between a B of their own and one B for all."""
    for i, case in enumerate(cases):
        what = {**asdict(case), "seed": None, "source": None}
        digest = zlib.crc32(json.dumps(what, sort_keys=True).encode())
        case.seed = 2 * digest + i % 2
    return cases


def _stack_form_groups(device: DeviceInfo, rungs: list[int],
                       quick: bool) -> list[tuple[Group, list[Case]]]:
    """The batched form for stacks of each swept kernel that has one, forced: its defaults
    and its forms (`Rung.forms`) where they have the batched form, and every configuration
    stored for the device from a stack; a stack of 3 at the configuration's tiles (and, in
    the full sweep, twice as many along M and K)."""
    groups: list[tuple[Group, list[Case]]] = []
    limits = device.limits()
    for number in rungs:
        rung = get_rung(number)
        if rung.stack_args is None:
            continue
        configs = [(rung.defaults(), "default")]
        for name, form in rung.forms.items():
            params = rung.resolve(dict(form))
            if all(params != p for p, _ in configs):
                configs.append((params, f"form: {name}"))
        for f in lookup.candidates(device, rung, None, batch=2):
            if all(f.params != p for p, _ in configs):
                configs.append((dict(f.params), f"{f.label} (a stack)"))
        for params, source in configs:
            if rung.stack_accepts is not None and not rung.stack_accepts(params):
                continue
            group = Group(_kernel_name(number, "stack-form"), "stack-form",
                          rung.params_text(params), source,
                          rung=number, params=params)
            bad = rung.first_violation(params, limits)
            if bad is not None:
                group.skipped = f"breaks '{bad.name}' on this device"
                groups.append((group, []))
                continue
            tm, tn, tk = rung.size_multiples(params)
            sizes = [(tm, tn, tk)] if quick else [(tm, tn, tk), (2 * tm, tn, 2 * tk)]
            cases = []
            for m, n, k in sizes:
                cases.append(Case("stack-form", m, n, k, rung=number, params=dict(params),
                                  source=source, batch=3))
            groups.append((group, _seeded(cases)))
    return groups


def _kernel_name(number: int, path: str) -> str:
    """A table row's kernel: the rung, and whether it ran its batched form for stacks."""
    return kernel_label(number) + (" stacked" if path == "stack-form" else "")


def _stack_groups(device_path: str | None) -> list[tuple[Group, list[Case]]]:
    """Stacks of products through gemm(): NumPy's, and the backend's device arrays'."""
    groups = []
    for path in ("stacks", *([f"{device_path}-stacks"] if device_path is not None else [])):
        group = Group(f"gemm() {path}", path, "chosen by gemm()", "auto")
        cases = []
        for m, n, k in ((7, 5, 3), (33, 17, 9), (64, 1, 65)):
            for order, ta, tb, al, be, pad, off in _combos(True):
                cases.append(Case(path, m, n, k, ta, tb, order, al, be, pad, off, True,
                                  None, None, "auto", batch=3))
        groups.append((group, _seeded(cases)))
    return groups


@dataclass
class Report:
    device: DeviceInfo
    groups: list[Group]
    seconds: float

    @property
    def failures(self) -> list[CaseResult]:
        return [r for g in self.groups for r in g.failed]

    @property
    def total(self) -> int:
        return sum(len(g.results) for g in self.groups)


def run_groups(backend: Any, planned: list[tuple[Group, list[Case]]],
               progress: Callable[[str], None] | None = None,
               mark: Callable[[Case], None] | None = None) -> list[Group]:
    """Run the groups' cases; `mark` is told of each case before it runs
    (`verify_running.RunningCase`), so that one that kills the process is known after it."""
    for group, cases in planned:
        t0 = time.perf_counter()
        for case in cases:
            if mark is not None:
                mark(case)
            group.results.append(run_case(backend, case))
        group.seconds = time.perf_counter() - t0
        if progress:
            status = group.skipped or f"{len(group.results) - len(group.failed)}/" \
                                      f"{len(group.results)} passed"
            progress(f"{group.name} [{group.source}] {group.kernel}: {status} "
                     f"({group.seconds:.1f} s)")
    return [g for g, _ in planned]


def _tried(planned: list[tuple[Group, list[Case]]],
           trial: Trial | None) -> list[tuple[Group, list[Case]]]:
    """The sweep with each group whose configuration failed `trial` failed already, its cases
    not run here: a configuration borrowed from another device may crash this runtime, and the
    sweep must live to report it."""
    if trial is None:
        return planned
    configs = {id(g): Config(g.rung, g.params, g.source) for g, cases in planned
               if g.rung is not None and g.params is not None and g.path == "buffers" and cases}
    failures = trial(list(configs.values()))
    out = []
    for group, cases in planned:
        config = configs.get(id(group))
        why = failures.get(config.key) if config is not None and config.borrowed else None
        if why is not None:
            group.results = [CaseResult(case, False, None, f"not run: its configuration failed "
                                        f"a trial launch in a child process ({why})")
                             for case in cases]
            cases = []
        out.append((group, cases))
    return out


def run_verify(device: DeviceInfo, rungs: list[int], quick: bool = False,
               progress: Callable[[str], None] | None = None,
               trial: Trial | None = None,
               mark: Callable[[Case], None] | None = None) -> Report:
    """The whole sweep on one device: every rung's configurations, then the gemm() paths."""
    t0 = time.perf_counter()
    backend = api.backend_for(device)
    groups = run_groups(backend, _tried(plan_cases(device, rungs, quick), trial), progress,
                        mark)
    return Report(device, groups, time.perf_counter() - t0)


def replay(device: DeviceInfo, cases: list[Case],
           progress: Callable[[str], None] | None = None, trial: Trial | None = None,
           mark: Callable[[Case], None] | None = None) -> Report:
    """Run saved cases again, grouped as the sweep grouped them."""
    t0 = time.perf_counter()
    by_group: dict[tuple, tuple[Group, list[Case]]] = {}
    for case in cases:
        key: tuple[Any, ...]
        if case.path in ("buffers", "stack-form") and case.rung is not None:
            key = (case.path, case.rung, json.dumps(case.params, sort_keys=True), case.source)
            name, kernel = _kernel_name(case.rung, case.path), params_text(case.params or {})
        else:  # gemm() chooses the kernel (gemm_buffers too, where the case names no rung)
            key = (case.path,)
            name, kernel = f"gemm() {case.path}", "chosen by gemm()"
        if key not in by_group:
            by_group[key] = (Group(name, case.path, kernel, case.source, rung=case.rung,
                                   params=case.params), [])
        by_group[key][1].append(case)
    groups = run_groups(api.backend_for(device), _tried(list(by_group.values()), trial),
                        progress, mark)
    return Report(device, groups, time.perf_counter() - t0)


# -- output ------------------------------------------------------------------------------------
def _group_status(g: Group) -> str:
    return ("skipped: " + g.skipped if g.skipped
            else "ok" if not g.failed else f"FAILED ({len(g.failed)})")


def _max_error(g: Group) -> float | None:
    errs = [r.rel_error for r in g.results if r.rel_error is not None and np.isfinite(r.rel_error)]
    return max(errs) if errs else None


def summary_table(report: Report, layout: Layout = FULL) -> str:
    """One line per group: its kernel and configuration, how many cases passed, the largest
    error, the time; fitted, only the parameters that differ from the defaults."""
    rows = []
    for g in report.groups:
        err = _max_error(g)
        params = g.kernel
        if not layout.wide and g.rung is not None and g.params is not None:
            params = params_brief(g.params, get_rung(g.rung).defaults())
        status = _group_status(g)
        rows.append([g.name, g.source, params, len(g.results), len(g.results) - len(g.failed),
                     len(g.failed), f"{err:.1e}" if err is not None else "",
                     f"{g.seconds:.1f}", Bad(status) if g.failed else status])
    d = report.device
    where = f" ({d.platform}, driver {d.driver_version})" if layout.wide else ""
    head = (f"verify on device {d.index}: {d.name}{where}: {report.total} cases, "
            f"{len(report.failures)} failed, {report.seconds:.1f} s")
    table = render(["kernel", Column("config", wrap=8), Column("parameters", wrap=20), "cases",
                    "passed", "failed", Column("max rel err", short="max err"), "seconds",
                    Column("status", wrap=16)], rows, layout)
    foot = [] if layout.wide else [BRIEF_NOTE]
    return "\n".join(fit_lines([head, table, *foot], layout))


def summary_rows(report: Report) -> list[dict[str, Any]]:
    """The summary table's lines as flat rows (CSV, and the JSON's "groups")."""
    return [{"kernel": g.name, "path": g.path, "rung": g.rung, "config": g.source,
             "params": g.kernel, "cases": len(g.results),
             "passed": len(g.results) - len(g.failed), "failed": len(g.failed),
             "max_rel_error": _max_error(g), "seconds": round(g.seconds, 3),
             "status": "skipped" if g.skipped else "ok" if not g.failed else "failed",
             "note": g.skipped} for g in report.groups]


def report_json(report: Report, command: str = "", rungs: list[int] | None = None,
                quick: bool | None = None) -> dict[str, Any]:
    """The whole sweep (`clgemm verify --json`): the groups as in the table, then every failing
    case as the --failures file holds it."""
    return {"format": REPORT_FORMAT, "device": report.device.to_json(), "command": command,
            "rungs": rungs, "quick": quick, "total": report.total,
            "failed": len(report.failures), "seconds": round(report.seconds, 3),
            "groups": [{**row, "params": g.params} for row, g in zip(summary_rows(report),
                                                                    report.groups)],
            "failures": failures_json(report, command)["cases"]}


def failures_json(report: Report, command: str = "") -> dict[str, Any]:
    return failures_document(report.device, command, report.failures)


def failures_document(device: DeviceInfo, command: str,
                      results: list[CaseResult]) -> dict[str, Any]:
    """A --failures file of these results, which --replay reads (`read_cases`)."""
    return {"format": FORMAT, "version": 1, "device": device.key,
            "device_name": device.name, "command": command,
            "replay": f"clgemm verify --device N --backend {device.backend} "
                      f"--replay THIS_FILE",
            "cases": [{**asdict(r.case), "message": r.message,
                       "rel_error": r.rel_error if r.rel_error is None or np.isfinite(r.rel_error)
                       else None}
                      for r in results]}


def load_cases(path: str | Path) -> list[Case]:
    return read_cases(path)[0]


def read_cases(path: str | Path) -> tuple[list[Case], str | None]:
    """The cases of a --failures file, and the key of the device they were recorded on (None
    if it does not say): the file is read once, so the cases and the key come from one
    version of it."""
    data, cases = read_json_list(path, "--replay", FORMAT, "cases",
                                 "a file written by 'clgemm verify --failures'")
    device = data.get("device")
    return ([_case_from_json(f"--replay {path}: case {i}", c) for i, c in enumerate(cases, 1)],
            device if isinstance(device, str) else None)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: what each field of a saved case must be, and how to say so
CASE_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "path": (lambda v: v in RUNNERS, f"one of {', '.join(RUNNERS)}"),
    **{name: (lambda v: _is_int(v) and v >= 0, "a non-negative integer")
       for name in ("m", "n", "k", "ld_pad", "offset", "seed", "batch")},
    **{name: (lambda v: isinstance(v, bool), "true or false")
       for name in ("trans_a", "trans_b", "c_given")},
    "order": (lambda v: v in ("F", "C"), "\"F\" or \"C\""),
    **{name: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number")
       for name in ("alpha", "beta")},
    "rung": (lambda v: v is None or _is_int(v), "a rung number or null"),
    "params": (lambda v: v is None or (isinstance(v, dict) and all(
        isinstance(k, str) and _is_int(x) for k, x in v.items())),
               "an object of integer parameters or null"),
    "source": (lambda v: isinstance(v, str), "a string"),
}


def _case_from_json(where: str, item: Any) -> Case:
    """A saved case, every field checked by name: a hand-edited or foreign file is refused
    before anything runs, rather than failing inside NumPy or the runtime."""
    if not isinstance(item, dict):
        raise UsageError(f"{where} is not a JSON object")
    missing = [f for f in ("path", "m", "n", "k") if f not in item]
    if missing:
        raise UsageError(f"{where} lacks {', '.join(missing)}")
    for name, (ok, wanted) in CASE_FIELDS.items():
        if name in item and not ok(item[name]):
            raise UsageError(f"{where}: {name} must be {wanted}, not {json.dumps(item[name])}")
    case = Case(**{k: v for k, v in item.items() if k in CASE_FIELDS})
    m, n, k = case.m, case.n, case.k
    check_host_memory(f"{where} ({m}x{n}x{k})", checking_bytes(m, n, k))
    return case
