"""`clgemm bench --call`: what a user's call costs, end to end, beside the libraries' own calls.

The kernel-only bench (`bench.py`) times the best rung's kernels at tuned shapes; a user calls
`clgemm.gemm()`, which also chooses a kernel, packs or transposes where the kernel needs it,
allocates scratch and queues every launch. This module times exactly that call, per shape:

* `gemm()`: C-ordered device arrays in, a new device array out (pyopencl arrays on OpenCL, CuPy
  arrays on CUDA), or NumPy arrays in and out (`numpy` mode, what a CPU user passes). Calls run
  back to back and the queue or stream is drained once at the end, as an application would: the
  time per call is the batch's wall time over its length (median of batches), gemm()'s batches
  in turns with the libraries' (`call_timing`).
* kernel-only: the device time of the one launch that multiplies (the rung or the direct
  kernel), from a launch log (`Backend.observe`), and of every launch of the call together; the
  overhead is the call's time beyond its launches.
* the vendor libraries' own calls on the same operands, their own temporary buffers and helper
  kernels included as ours are: cuBLAS through CuPy's matmul (FP32, TF32 off) on CUDA; CLBlast's
  SGEMM on OpenCL, with its built-in parameters and, where a tuning of CLBlast for the device is
  given (`--clblast-params`), with those applied through CLBlastOverrideParameters; NumPy on
  the host in `numpy` mode.

Every result is checked with its output poisoned (NaN) first: against the full float64 product
where it is cheap (M*N*K <= 2^33), else against float64 products with random vectors (C x
against A (B x), Freivalds' check: a wrong element shows in its row), plus every element finite.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from clgemm.backends import KINDS, Backend, VendorBlas, vendor_blas
from clgemm.core import accuracy
from clgemm.core.errors import UsageError
from clgemm.core.files import read_json
from clgemm.core.settings import cupy_tf32
from clgemm.core.tables import FULL, Column, Layout, fit_lines, render, status_cell
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.library.stack_tiled import stack_params
from clgemm.measure.call_timing import per_call_ms_in_turns
from clgemm.measure.ladder import provenance
from clgemm.rungs import get_rung
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import TILED

#: the shapes the call bench runs on a GPU by default
GPU_SHAPES: tuple[tuple[int, int, int], ...] = (
    (768, 768, 768), (1000, 1000, 1000), (1024, 1024, 1024), (2048, 2048, 2048),
    (3000, 3000, 3000), (4096, 4096, 4096), (4097, 4097, 4097), (8192, 8192, 8192),
    (8192, 8192, 512), (2048, 8192, 1024), (12288, 1024, 4096), (2500, 3500, 4500),
    (16384, 16384, 256), (4096, 4096, 64), (4096, 4096, 128))
#: and on a CPU (NumPy in and out)
CPU_SHAPES: tuple[tuple[int, int, int], ...] = (
    (256, 256, 256), (512, 512, 512), (1000, 1000, 1000), (1024, 1024, 1024),
    (2048, 2048, 2048), (1024, 1024, 64), (2048, 2048, 256))

#: named shape sets (`--sizes small`, `--sizes classes`, ...): small squares, where a call's host
#: time decides; the classes of shapes tiled kernels waste (small and skinny products, small K,
#: large K with a small result) beside squares; large products, where the kernel decides
NAMED_SHAPES: dict[str, tuple[tuple[int, ...], ...]] = {
    "small": tuple((s, s, s) for s in (64, 128, 256, 512, 768, 1024)),
    "classes": (tuple((s, s, s) for s in (256, 512, 1024, 2048))
                + tuple((s, s, k) for s in (2048, 4096) for k in (32, 64, 128))
                + tuple((4096, n, 4096) for n in (16, 32, 64))
                + tuple((m, 4096, 4096) for m in (16, 32, 64))
                + tuple((s, s, 16384) for s in (256, 512))),
    # large products, every dimension 2048 or more, tile multiples or not
    "large": ((2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4097, 4097, 4097),
              (2500, 3500, 4500), (4096, 4096, 2048), (8192, 2048, 4096)),
    # stacks, as (products, M, N, K): each product's own A and B, C-ordered
    "stacks": ((1000, 64, 64, 64), (100, 256, 256, 256), (10, 1024, 1024, 1024)),
}

#: calls on device arrays queued ahead of each call whose launches are observed (`_kernel_times`)
WARM_CALLS = 2
#: products up to this many multiply-adds are checked against the whole float64 product
FULL_CHECK = 2**33


@dataclass
class CallRow:
    #: M, N, K; or for a stack (products, M, N, K)
    shape: tuple[int, ...]
    status: str = "ok"
    note: str = ""
    choice: str = ""
    call_ms: float | None = None
    kernel_ms: float | None = None
    launches_ms: float | None = None
    launches: int = 0
    rel_error: float | None = None
    #: C given to every call (else each call makes a new one)
    c_given: bool = False
    references: dict[str, dict] = field(default_factory=dict)

    def gflops(self, ms: float | None) -> float | None:
        return None if not ms else 2.0 * math.prod(self.shape) / (ms * 1e-3) / 1e9

    def to_json(self) -> dict:
        return {"shape": list(self.shape), "status": self.status, "note": self.note,
                "choice": self.choice, "call_ms": self.call_ms,
                "call_gflops": self.gflops(self.call_ms), "kernel_ms": self.kernel_ms,
                "kernel_gflops": self.gflops(self.kernel_ms), "launches_ms": self.launches_ms,
                "launches": self.launches,
                "overhead_ms": (self.call_ms - self.launches_ms
                                if self.call_ms and self.launches_ms else None),
                "rel_error": self.rel_error, "c_given": self.c_given,
                "references": {name: {**r, "gflops": self.gflops(r.get("ms"))}
                               for name, r in self.references.items()}}


def checked_error(a: np.ndarray, b: np.ndarray, c: np.ndarray, seed: int = 0) -> float:
    """Relative error of C against A B in float64: the whole product where that is cheap, else
    C x against A (B x) for two random vectors; inf where any element is not finite. Stacks:
    the largest error of their products."""
    c = np.asarray(c)
    if c.ndim > 2:
        return max((checked_error(x, y, z, seed) for x, y, z in zip(a, b, c)), default=0.0)
    if not np.all(np.isfinite(c)):
        return float("inf")
    m, k = a.shape
    n = b.shape[1]
    if m * n * k <= FULL_CHECK:
        return accuracy.relative_error(c, accuracy.reference(a, b))
    x = np.random.default_rng(seed).standard_normal((n, 2))
    want = a.astype(np.float64) @ (b.astype(np.float64) @ x)
    got = c.astype(np.float64) @ x
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


class Side:
    """How one kind of array is made, synchronised and read back: NumPy arrays, or the
    backend's own array library through its adapter."""

    def __init__(self, backend: Backend, mode: str):
        self.backend, self.mode = backend, mode
        self.kind = KINDS[backend.name]
        #: the queues the arrays were made on, which `sync` finishes besides the backend's
        self.queues: list[Any] = []

    def put(self, host: np.ndarray) -> Any:
        if self.mode == "numpy":
            return host
        x = self.kind.upload(self.backend, host)
        queue = getattr(x, "queue", None)  # pyopencl's: a queue of its own, as a user's
        if queue is not None and not any(queue == q for q in self.queues):
            self.queues.append(queue)
        return x

    def nan(self, shape: tuple[int, ...]) -> Any:
        return self.put(np.full(shape, np.nan, np.float32))

    def get(self, x: Any) -> np.ndarray:
        return x if self.mode == "numpy" else self.kind.download(x)

    def sync(self) -> None:
        if self.mode != "numpy":
            for queue in self.queues:
                queue.finish()
            self.backend.synchronize()


def _kernel_times(backend: Any, side: Side, call: Callable[[], Any],
                  main: str) -> tuple[float, float, int]:
    """(main kernel ms, all launches ms, launches) of one call, from the launch log; medians of
    a few calls. On device arrays each observed call is queued behind WARM_CALLS unobserved
    ones rather than after the device has drained (a call on NumPy arrays returns only once
    done): the call's own timing (`per_call_ms`) finds the device busy, and a launch started
    on an idle GPU can run slower than the same launch among others (results/h100/
    kernel-column), which put the kernel column below the whole call. The log's events time
    the launches themselves, so the queue ahead of them adds nothing. (An OpenCL queue that
    does not profile is still drained before each observed launch: `OpenCLBackend.enqueue`.)"""
    mains, totals, count = [], [], 0
    for _ in range(5):
        side.sync()
        for _ in range(WARM_CALLS if side.mode != "numpy" else 0):
            call()
        with backend.observe() as log:
            call()
        side.sync()
        times = log.times()
        count = len(times)
        mains.append(sum(ms for name, ms in times if name == main))
        totals.append(sum(ms for _, ms in times))
    return statistics.median(mains), statistics.median(totals), count


def _stack_choice(backend: Any, m: int, n: int, k: int, count: int) -> Config:
    """The kernel a C-ordered stack of `count` products runs on (as the kernels see them)."""
    config, on_stack = stack_params(backend, m, n, k, count)
    if config is not None:
        return Config(TILED.number, config.params,
                      "measured on a stack" if on_stack else "a stack of products")
    return Config(DIRECT.number, {}, "a stack of products")


def bench_call(backend: Any, shape: tuple[int, ...], mode: str,
               vendors: Sequence["Vendor"], seed: int = 0, c_given: bool = False) -> CallRow:
    """One shape (or a stack: products, M, N, K): check, then time gemm() and each vendor's
    call on the same operands in turns (`timed_beside`), each into a C of its own given to
    every call where `c_given`, else a new C per call."""
    *batch, m, n, k = shape
    row = CallRow(tuple(shape), c_given=c_given)
    side = Side(backend, mode)
    a_host, b_host = _operands(shape, seed)
    try:
        a, b = side.put(a_host), side.put(b_host)
    except Exception as exc:  # out of memory and the like: a note, not a crash
        row.status, row.note = "skipped", f"cannot hold the operands: {type(exc).__name__}"
        return row
    out = side.put(np.zeros((*batch, m, n), np.float32)) if c_given else None
    run = _gemm(backend, mode)

    def call() -> Any:
        return run(a, b, out)

    try:
        choice = (api.choose_kernel(backend.device, n, m, k) if not batch  # C-ordered: swapped
                  else _stack_choice(backend, n, m, k, math.prod(batch)))
        row.choice = choice.describe() if not batch else f"{get_rung(choice.rung).slug} kernel (stack)"
        poisoned = side.nan((*batch, m, n))
        run(a, b, poisoned)
        side.sync()
        err = checked_error(a_host, b_host, side.get(poisoned), seed)
        row.rel_error = err if math.isfinite(err) else None
        if not err <= accuracy.TOLERANCE:
            row.status, row.note = "wrong", f"relative error {err:.2e}"
            return row
        checked = {v.name: v.checked(a_host, b_host, a, b, side, seed, c_given) for v in vendors}
        row.call_ms = timed_beside(call, checked, side.sync)
        record = get_rung(choice.rung)
        row.kernel_ms, row.launches_ms, row.launches = _kernel_times(backend, side, call,
                                                                     record.kernel)
    except Exception as exc:  # a failure of ours at this shape is this row's finding
        row.status, row.note = "failed", f"{type(exc).__name__}: {exc}"
        return row
    row.references.update({name: result for name, (result, _) in checked.items()})
    return row


Checked = tuple[dict, Callable[[], Any] | None]


def _operands(shape: Sequence[int], seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The bench's A and B for a product or a stack (products, M, N, K): the same for a seed
    in every pass over the shapes."""
    *batch, m, n, k = shape
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((*batch, m, k), dtype=np.float32),
            rng.standard_normal((*batch, k, n), dtype=np.float32))


def _gemm(backend: Any, mode: str) -> Callable[[Any, Any, Any], Any]:
    """gemm() as the bench calls it: on device arrays, where the arrays are; on NumPy arrays,
    on the bench's device and backend."""
    if mode == "numpy":
        return lambda a, b, c: api.gemm(a, b, c, device=backend.device, backend=backend)
    return lambda a, b, c: api.gemm(a, b, c)


def timed_beside(call: Callable[[], Any], libraries: dict[str, Checked],
                 sync: Callable[[], None]) -> float:
    """gemm()'s time per call, timed in turns with each library's call that passed its check
    (`call_timing.per_call_ms_in_turns`): each library's result gets its time (`ms`) and
    gemm()'s beside it (`beside_ms`), which its ratio is taken against. A library that fails
    while timed is a finding about it; gemm() failing raises."""
    ready = [(result, run) for result, run in libraries.values() if run is not None]
    times = per_call_ms_in_turns([call, *(run for _, run in ready)], sync)
    if isinstance(times[0], Exception):
        raise times[0]
    for (result, _), got in zip(ready, times[1:]):
        if isinstance(got, Exception):
            result.clear()
            result.update(status="failed", note=f"{type(got).__name__}: {got}")
        else:
            result.update(ms=got, beside_ms=times[0])
    return times[0]


class Vendor:
    """A library's own SGEMM call on the bench's operands."""

    name = ""

    def checked(self, a_host: np.ndarray, b_host: np.ndarray, a: Any, b: Any, side: Side,
                seed: int, c_given: bool = False) -> Checked:
        """The library's result on a poisoned C checked, and the call to time where it passed
        (None where it failed or was wrong)."""
        try:
            poisoned = self.run(a, b, side, poison=True)
            side.sync()
            err = checked_error(a_host, b_host, side.get(poisoned), seed)
            if not err <= accuracy.TOLERANCE:
                return {"status": "wrong", "rel_error": err if math.isfinite(err) else None}, None
            out = (side.put(np.zeros(a_host.shape[:-1] + b_host.shape[-1:], np.float32))
                   if c_given else None)
            return {"status": "ok", "rel_error": err}, lambda: self.run(a, b, side, out=out)
        except Exception as exc:  # a library failure is a finding about the library
            return {"status": "failed", "note": f"{type(exc).__name__}: {exc}"}, None

    def run(self, a: Any, b: Any, side: Side, poison: bool = False, out: Any = None) -> Any:
        """The library's call; `out`: the C to write (None: the call makes one)."""
        raise NotImplementedError


class Library(Vendor):
    """The backend's vendor SGEMM called on the bench's device arrays as that array library's
    users call it (cuBLAS through CuPy's matmul; CLBlast row-major on pyopencl's buffers), a new
    pooled C per call as gemm() makes."""

    def __init__(self, vendor: VendorBlas, backend: Backend, label: str):
        self.vendor, self.backend, self.name = vendor, backend, label

    def run(self, a: Any, b: Any, side: Side, poison: bool = False, out: Any = None) -> Any:
        if poison:
            out = side.nan(tuple(a.shape[:-1]) + tuple(b.shape[-1:]))
        return self.vendor.matmul(self.backend, a, b, out)


class LibraryHost(Vendor):
    """The vendor SGEMM as a NumPy user reaches it: the operands copied to the device, the
    call, the result copied back (as gemm() does with NumPy arrays)."""

    def __init__(self, vendor: VendorBlas, backend: Backend, label: str):
        self.vendor, self.backend, self.name = vendor, backend, label
        self.kind = KINDS[backend.name]

    def run(self, a: Any, b: Any, side: Side, poison: bool = False, out: Any = None) -> Any:
        da, db = self.kind.upload(self.backend, a), self.kind.upload(self.backend, b)
        got = self.kind.download(self.vendor.matmul(self.backend, da, db))
        if out is None:
            return got
        out[...] = got
        return out


class NumPyHost(Vendor):
    name = "NumPy"

    def run(self, a: Any, b: Any, side: Side, poison: bool = False, out: Any = None) -> Any:
        return np.matmul(a, b, out=out)


def run_bench(backend: Any, shapes: Sequence[tuple[int, ...]], mode: str,
              clblast_params: dict[str, int] | None = None,
              progress: Callable[[str], None] | None = None,
              c_given: bool = False) -> list[CallRow]:
    """Every shape with the untuned libraries, then (CLBlast's parameters are process-wide once
    overridden) every shape again with CLBlast tuned."""
    say = progress or (lambda msg: None)
    if cupy_tf32():
        raise UsageError("CUPY_TF32 is set: cuBLAS would use TF32 tensor cores; unset it")
    vendor = vendor_blas(backend.name)
    if clblast_params and vendor.key != "clblast":
        raise UsageError(f"CLBlast's parameters apply to the OpenCL backend, not {backend.name}")
    why = vendor.missing()
    vendors: list[Vendor] = [NumPyHost()] if mode == "numpy" else []
    if why:
        say(f"{vendor.label}: {why}")
    elif mode == "numpy":
        vendors.append(LibraryHost(vendor, backend, vendor.label))
    else:
        vendors.append(Library(vendor, backend, vendor.label))
    rows = []
    for shape in shapes:
        say(shape_text(shape))
        rows.append(bench_call(backend, shape, mode, vendors, c_given=c_given))
    # The tuned library's parameters are for device arrays, and stay for the whole process.
    if clblast_params and mode == "device" and not why:
        vendor.override(backend, clblast_params)
        tuned = Library(vendor, backend, f"{vendor.label} (tuned)")
        for row in rows:
            if row.status != "ok":
                continue
            say(f"{shape_text(row.shape)}: {tuned.name}")
            side, run = Side(backend, mode), _gemm(backend, mode)
            a_host, b_host = _operands(row.shape, 0)
            a, b = side.put(a_host), side.put(b_host)
            out = (side.put(np.zeros(a_host.shape[:-1] + b_host.shape[-1:], np.float32))
                   if c_given else None)
            checked = {tuned.name: tuned.checked(a_host, b_host, a, b, side, 0, c_given)}
            try:
                timed_beside(lambda: run(a, b, out), checked, side.sync)
            except Exception as exc:  # gemm() passed at this shape before: say so, keep the row
                checked[tuned.name] = ({"status": "failed",
                                        "note": f"gemm() beside it: {type(exc).__name__}: {exc}"},
                                       None)
            row.references[tuned.name] = checked[tuned.name][0]
    return rows


FORMAT = "clgemm-call-bench"


def read_clblast_params(path: str) -> tuple[dict[str, int], dict]:
    """A tuning of CLBlast's Xgemm for the device: {"params": {NAME: int}, "provenance": {...}};
    checked, since the names and values go to the library."""

    data = read_json(path, "--clblast-params")
    params = data.get("params") if isinstance(data, dict) else None
    if not isinstance(params, dict) or not params:
        raise UsageError(f"--clblast-params {path}: no 'params' object")
    for name, value in params.items():
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or type(value) is not int or value < 0:
            raise UsageError(f"--clblast-params {path}: {name}={value!r} is not a parameter "
                             f"name with a non-negative integer value")
    return params, data.get("provenance", {})


def to_json(backend: Any, rows: list[CallRow], command: str, mode: str,
            clblast: tuple[dict, dict] | None) -> dict:
    dev = backend.device
    out = {"format": FORMAT, "device": dev.to_json(),
           "provenance": {**provenance(command), "device": dev.name, "backend": dev.backend,
                          "driver": dev.driver_version, "mode": mode,
                          "c_given": any(r.c_given for r in rows)},
           "rows": [r.to_json() for r in rows]}
    if clblast:
        out["clblast_tuned"] = {"params": clblast[0], "provenance": clblast[1]}
    return out


def _fmt(x: float | None, spec: str = ",.0f") -> str:
    return "" if x is None else format(x, spec)


def shape_text(shape: Sequence[int]) -> str:
    """MxNxK, or for a stack "P x MxNxK"."""
    text = "x".join(map(str, shape[-3:]))
    return f"{shape[0]} x {text}" if len(shape) > 3 else text


def _us(ms: float | None) -> float | None:
    return None if ms is None else ms * 1e3


def _ratio(x: float | None) -> str:
    """gemm() over a library: two decimals, or two significant digits below 0.1, so a tiny
    shape's 0.004 does not read as zero."""
    if x is None:
        return ""
    return format(x, ".2f") if x >= 0.1 else format(x, ".2g")


def geo_mean(values: Sequence[float | None]) -> float | None:
    """The geometric mean of the positive finite values (None where there is none): a ratio
    that is missing or zero says nothing about the others."""
    xs = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def gemm_over(row: dict, ref: dict) -> float | None:
    """gemm()'s speed over a library's at one row: the library's time per call over gemm()'s
    timed beside it in turns (`beside_ms`), or over gemm()'s own time in runs written before
    the calls were timed in turns; None where the library did not run."""
    mine = ref.get("beside_ms") or row.get("call_ms")
    if ref.get("status") != "ok" or not ref.get("ms") or not mine:
        return None
    return float(ref["ms"]) / float(mine)


def ratios(data: dict) -> dict[str, list[float | None]]:
    """Per library: gemm()'s speed over the library's (`gemm_over`), one per row that ran
    (None where the library did not), unrounded."""
    names = sorted({n for r in data["rows"] for n in r["references"]})
    out: dict[str, list[float | None]] = {n: [] for n in names}
    for r in data["rows"]:
        if r["status"] != "ok":
            continue
        for n in names:
            out[n].append(gemm_over(r, r["references"].get(n, {})))
    return out


def table(data: dict, layout: Layout = FULL) -> str:
    """One line per shape: gemm()'s call, its kernel alone, the overhead, each library's call,
    and gemm() as a multiple of each library. Fitted, the headers are short and a line under
    the table says what they count."""
    names = sorted({n for r in data["rows"] for n in r["references"]})
    columns: list[Column | str] = [
        "shape", Column("gemm() GFLOP/s", short="gemm()"),
        Column("kernel GFLOP/s", short="kernel"), Column("overhead ms", short="over ms"),
        Column("kernel", short="chosen", wrap=12)]
    columns += [Column(f"{n} GFLOP/s", short=n, wrap=8, drop=len(names) - i)
                for i, n in enumerate(names)]
    columns += [Column(f"/ {n}", wrap=8) for n in names]
    columns += [Column("gemm() us/call", short="us", drop=len(names) + 1)]
    columns += [Column(f"{n} us/call", short=f"{n} us", wrap=8, drop=len(names) - i)
                for i, n in enumerate(names)]
    lines = []
    for r in data["rows"]:
        shape = shape_text(r["shape"])
        if r["status"] != "ok":
            lines.append([shape, status_cell(r["status"]), r["note"]]
                         + [""] * (len(columns) - 3))
            continue
        refs = [r["references"].get(n, {}) for n in names]
        shares = [gemm_over(r, ref) for ref in refs]
        lines.append([shape, _fmt(r["call_gflops"]), _fmt(r["kernel_gflops"]),
                      _fmt(r["overhead_ms"], ".3f"), r["choice"].split(" (")[0]]
                     + [_fmt(ref.get("gflops")) if ref.get("status") == "ok"
                        else status_cell(ref.get("status", "")) for ref in refs]
                     + [_ratio(x) for x in shares]
                     + [_fmt(_us(r.get("call_ms")), ",.1f")]
                     + [_fmt(_us(ref.get("ms")), ",.1f") if ref.get("status") == "ok" else ""
                        for ref in refs])
    geo = []
    for n, values in ratios(data).items():
        mean = geo_mean(values)
        if mean is not None:
            lowest = min(v for v in values if v is not None and v > 0)
            geo.append(f"{n}: geo-mean {_ratio(mean)}, lowest {_ratio(lowest)}")
    text: list[str] = [render(columns, lines, layout)]
    if not layout.wide:
        text.append("GFLOP/s of gemm()'s whole call, of its kernel alone and of each library's "
                    "call; over ms: the call's time beyond its launches; / X: gemm() over X; "
                    "us: microseconds per call")
    if geo:
        text.append("gemm() / " + "; ".join(geo))
    return "\n".join(fit_lines(text, layout))


def csv_rows(data: dict) -> list[dict]:
    """One flat row per shape of `to_json`'s data, for CSV: gemm()'s call and kernel, then each
    library's status, time and GFLOP/s."""
    names = sorted({n for r in data["rows"] for n in r["references"]})
    out = []
    for r in data["rows"]:
        flat = {"batch": r["shape"][0] if len(r["shape"]) > 3 else None,
                "m": r["shape"][-3], "n": r["shape"][-2], "k": r["shape"][-1],
                **{k: r[k] for k in ("status", "note", "choice", "call_ms", "call_gflops",
                                     "kernel_ms", "kernel_gflops", "launches_ms", "launches",
                                     "overhead_ms", "rel_error", "c_given")}}
        for n in names:
            ref = r["references"].get(n, {})
            flat.update({f"{n} status": ref.get("status"), f"{n} ms": ref.get("ms"),
                         f"{n} gflops": ref.get("gflops")})
        out.append(flat)
    return out
