"""Run one rung with one parameter set on one problem: prepare, build, check, time.

The checked launch is separate from the timed ones: the output is poisoned with NaN, one launch
runs, and its result alone is compared with the float64 reference. Then warm-up launches and
`repeats` timed launches follow; the median is reported. Helper kernels (the transpose of B) are
timed the same way and reported apart.
"""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import check, sources
from .backends.base import Backend
from .errors import BuildError, ClgemmError, LaunchError, UsageError
from .memory import check_host_memory, check_indexing, check_memory, checking_bytes
from .rungs import Helper, Rung


@dataclass(frozen=True)
class Problem:
    m: int
    n: int
    k: int

    def __post_init__(self):
        for name, v in zip("MNK", (self.m, self.n, self.k)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise UsageError(f"size {name}={v!r} must be a positive integer")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    def as_list(self) -> list[int]:
        return [self.m, self.n, self.k]

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    def gflops(self, ms: float | None) -> float | None:
        return None if not ms else self.flops / (ms * 1e-3) / 1e9


@dataclass
class RunResult:
    rung: int
    name: str
    params: dict
    status: str
    ms: float | None = None
    gflops: float | None = None
    helper_ms: float | None = None
    rel_error: float | None = None
    times_ms: list[float] = field(default_factory=list)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        d = asdict(self)
        if d["rel_error"] is not None and not np.isfinite(d["rel_error"]):
            d["rel_error"] = None
        return d


_SIZE_ITEM = re.compile(r"^\s*(\d+)\s*(?:[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*)?$")


def parse_sizes(text: str, option: str = "--sizes") -> list[Problem]:
    """'256,1000,4096x4096x128' -> problems; each item S (square) or MxNxK, all positive."""
    problems: list[Problem] = []
    for item in text.split(","):
        match = _SIZE_ITEM.match(item)
        if not match:
            raise UsageError(f"{option}: '{item.strip()}' is not S or MxNxK (e.g. 1024 or "
                             f"4096x4096x128)")
        dims = [int(g) for g in match.groups() if g is not None]
        m, n, k = dims * 3 if len(dims) == 1 else dims
        if min(m, n, k) < 1:
            raise UsageError(f"{option}: '{item.strip()}' has a size below 1")
        p = Problem(m, n, k)
        if p not in problems:
            problems.append(p)
    return problems


def kernel_source(backend: Backend, filename: str) -> str:
    """The text a backend compiles: its header, the shared definitions, then the kernel file."""
    return sources.kernel_source(backend.header(), filename)


class Workspace:
    """Random inputs, their float64 reference and device buffers for one problem; shared by
    every rung measured on it, so inputs are uploaded once."""

    def __init__(self, backend: Backend, problem: Problem, seed: int = 0):
        self.backend = backend
        self.problem = problem
        rng = np.random.default_rng(seed)
        m, n, k = problem.m, problem.n, problem.k
        self.a = rng.standard_normal((m, k), dtype=np.float32)
        self.b = rng.standard_normal((k, n), dtype=np.float32)
        self._ref: np.ndarray | None = None
        # Column-major storage, as the kernels expect.
        self.buf_a = backend.to_device(self.a.ravel(order="F"))
        self.buf_b = backend.to_device(self.b.ravel(order="F"))
        self.buf_c = backend.alloc(m * n)
        self._scratch: dict[str, object] = {}

    @property
    def ref(self) -> np.ndarray:
        if self._ref is None:
            self._ref = check.reference(self.a, self.b)
        return self._ref

    def scratch(self, name: str, count: int):
        """A named device buffer reused across rungs (the transposed B, padded copies, ...)."""
        key = f"{name}:{count}"
        if key not in self._scratch:
            self._scratch[key] = self.backend.alloc(count)
        return self._scratch[key]

    def result(self) -> np.ndarray:
        p = self.problem
        flat = self.backend.to_host(self.buf_c, p.m * p.n)
        return flat.reshape((p.m, p.n), order="F")


def helper_scratch(helper: Helper, problem: Problem) -> tuple[str, int]:
    """The scratch buffer (name, floats) a helper step writes into; named by what it holds, so
    rungs whose helpers produce the same thing share one."""
    if helper.kernel == "transpose":
        return "BT", problem.k * problem.n
    rows = problem.m if helper.operand == "A" else problem.n
    return f"{helper.operand} panels of {helper.macros['PANEL']}", rows * problem.k


def workspace_buffers(problem: Problem, configs: Iterable[tuple[Rung, Mapping[str, int]]],
                      vendor_c: bool = True) -> list[tuple[str, int]]:
    """Every device buffer (name, floats) a Workspace comes to hold while these configurations
    run on it: A, B, C, their helpers' scratch, and (`vendor_c`) the C of a vendor BLAS
    reference, so that sizes can be refused before the first one is allocated."""
    p = problem
    buffers = {"A": p.m * p.k, "B": p.k * p.n, "C": p.m * p.n}
    for rung, params in configs:
        for helper in rung.helpers_for(params):
            name, count = helper_scratch(helper, p)
            buffers[name] = count
    if vendor_c:
        buffers["vendor BLAS's C"] = p.m * p.n
    return list(buffers.items())


def check_workspace(device: Any, problem: Problem,
                    configs: Iterable[tuple[Rung, Mapping[str, int]]],
                    vendor_c: bool = True) -> None:
    """Refuse (UsageError) a problem whose buffers the kernels cannot index, the device cannot
    hold, or whose float64 check the host cannot hold; before anything is allocated."""
    buffers = workspace_buffers(problem, configs, vendor_c)
    check_indexing(buffers)
    what = f"M={problem.m} N={problem.n} K={problem.k}"
    check_memory(device, buffers, what=what)
    check_host_memory(f"checking {what} against its float64 reference",
                      checking_bytes(problem.m, problem.n, problem.k))


# -- helper steps -------------------------------------------------------------------------------
# Each helper runner prepares the buffers a rung reads and returns a launch closure; the rung then
# takes the (A, B) buffers it returns.
HelperLaunch = Callable[[], float]


def _transpose_b(backend: Backend, ws: Workspace, helper: Helper, a_buf, b_buf):
    p = ws.problem
    knl = backend.build(kernel_source(backend, helper.file), helper.macros, helper.kernel)
    bt = ws.scratch(*helper_scratch(helper, p))
    tx, ty = helper.local_size
    gsize = (-(-p.k // tx) * tx, -(-p.n // ty) * ty)

    def launch() -> float:
        return backend.launch(knl, gsize, helper.local_size, [p.k, p.n, b_buf, bt])

    return launch, (a_buf, bt)


def panel_launch(backend: Backend, helper: Helper, rows: int, k: int, src: Any,
                 out: Any) -> Callable[[], float]:
    """The launch of a `pack_panels` helper: `rows` x `k` column-major `src` into panels in
    `out` (gemm() packs its own operands with it too)."""
    knl = backend.build(kernel_source(backend, helper.file), helper.macros, helper.kernel)
    tx, ty = helper.local_size
    gsize = (-(-rows // tx) * tx, -(-k // ty) * ty)
    return lambda: backend.launch(knl, gsize, helper.local_size, [rows, k, src, out])


def _pack_panels(backend: Backend, ws: Workspace, helper: Helper, a_buf, b_buf):
    """A (M x K) or BT (N x K) into panels of PANEL rows; runs after the transpose of B."""
    p = ws.problem
    rows, src = (p.m, a_buf) if helper.operand == "A" else (p.n, b_buf)
    out = ws.scratch(*helper_scratch(helper, p))
    launch = panel_launch(backend, helper, rows, p.k, src, out)
    return launch, ((out, b_buf) if helper.operand == "A" else (a_buf, out))


def run_helpers(backend: Backend, ws: Workspace,
                helpers: Sequence[Helper]) -> tuple[list[HelperLaunch], Any, Any]:
    """Prepare every helper step in order, each reading what the one before left: the launch
    closures and the (A, B) buffers the rung then reads."""
    a_buf, b_buf = ws.buf_a, ws.buf_b
    launches = []
    for helper in helpers:
        launch, (a_buf, b_buf) = HELPER_RUNNERS[helper.kernel](backend, ws, helper, a_buf, b_buf)
        launches.append(launch)
    return launches, a_buf, b_buf


HELPER_RUNNERS = {"transpose": _transpose_b, "pack_panels": _pack_panels}


def median_time(launch: Callable[[], float], warmup: int, repeats: int) -> list[float]:
    for _ in range(warmup):
        launch()
    return [launch() for _ in range(max(1, repeats))]


def run_rung(backend: Backend, ws: Workspace, rung: Rung, params: Mapping[str, int],
             repeats: int = 5, warmup: int = 1, tolerance: float = check.TOLERANCE) -> RunResult:
    """Measure one configuration. Never raises for a kernel's own failure: the status says it."""
    p = ws.problem
    result = RunResult(rung=rung.number, name=rung.title, params=dict(params), status="ok")

    why = rung.size_problem(params, p.m, p.n, p.k)
    if why:
        result.status, result.message = "unsupported-size", why
        return result
    bad = rung.first_violation(params, backend.device.limits(), stages=("device",))
    if bad is not None:
        result.status, result.message = "exceeds-device", bad.name
        return result

    try:
        helper_launches, a_buf, b_buf = run_helpers(backend, ws, rung.helpers_for(params))
        knl = backend.build(kernel_source(backend, rung.file), rung.macros(params), rung.kernel)
    except BuildError as exc:
        result.status, result.message = "build-failed", str(exc)
        return result

    gsize, lsize = rung.geometry(params, p.m, p.n)
    args = rung.args(p.m, p.n, p.k, a_buf, b_buf, ws.buf_c)

    def launch() -> float:
        return backend.launch(knl, gsize, lsize, args)

    try:
        for h in helper_launches:
            h()
        backend.fill(ws.buf_c, float("nan"), p.m * p.n)
        launch()
        out = ws.result()
        err = check.relative_error(out, ws.ref)
        result.rel_error = err
        if not err <= tolerance:
            result.status = "wrong"
            holes = check.unwritten_count(out)
            result.message = (f"{holes} of {out.size} elements unwritten or NaN" if holes
                              else f"relative error {err:.2e} > {tolerance:.0e}")
            return result
        if helper_launches:
            helper_times = median_time(lambda: sum(h() for h in helper_launches), 0, repeats)
            result.helper_ms = statistics.median(helper_times)
        result.times_ms = median_time(launch, warmup, repeats)
    except LaunchError as exc:
        result.status, result.message = "launch-failed", str(exc)
        return result
    except ClgemmError as exc:  # pragma: no cover - defensive: any other kernel-side failure
        result.status, result.message = "failed", str(exc)
        return result
    result.ms = statistics.median(result.times_ms)
    result.gflops = p.gflops(result.ms)
    return result


def time_numpy(ws: Workspace, repeats: int = 5) -> float:
    """Median wall time (ms) of the host's float32 A @ B through NumPy's BLAS."""
    a, b = ws.a, ws.b
    a @ b  # warm-up (thread pool start, page faults)
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)
