"""Run one rung with one parameter set on one problem: prepare, build, check, time.

The checked launch is separate from the timed ones: the output is poisoned with NaN, one launch
runs, and its result alone is compared with the float64 reference. Then warm-up launches and
`repeats` timed launches follow; the median is reported. Helper kernels (the transpose of B) are
timed the same way and reported apart.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from clgemm.backends.base import Backend
from clgemm.configs.splits import reads_b_as_gemm, slices_gemm_decides
from clgemm.configs.launch import (Prepared, helper_rows, main_macros, prepare, prepare_stack,
                                   scratch_name, slices_to_run, stack_form_macros)
from clgemm.core import accuracy
from clgemm.core.errors import BuildError, ClgemmError, LaunchError
from clgemm.core.memory_fit import check_host_memory, check_indexing, check_memory, checking_bytes
from clgemm.core.problem import Problem
from clgemm.rungs import Rung


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


class Workspace:
    """Random inputs, their float64 reference and device buffers for one problem; shared by
    every rung measured on it, so inputs are uploaded once. A stack's products lie one after
    the other, each column-major (`a`, `b` and the result then have the batch first)."""

    def __init__(self, backend: Backend, problem: Problem, seed: int = 0):
        self.backend = backend
        self.problem = problem
        rng = np.random.default_rng(seed)
        m, n, k, batch = problem.m, problem.n, problem.k, problem.batch
        lead = (batch,) if batch > 1 else ()
        self.a = rng.standard_normal((*lead, m, k), dtype=np.float32)
        self.b = rng.standard_normal((*lead, k, n), dtype=np.float32)
        self._ref: np.ndarray | None = None
        # Column-major storage, as the kernels expect.
        self.buf_a = backend.to_device(_column_major(self.a))
        self.buf_b = backend.to_device(_column_major(self.b))
        self.buf_c = backend.alloc(batch * m * n)
        self._scratch: dict[str, object] = {}

    @property
    def ref(self) -> np.ndarray:
        if self._ref is None:
            self._ref = accuracy.reference(self.a, self.b)
        return self._ref

    def scratch(self, name: str, count: int) -> Any:
        """A named device buffer reused across rungs (the transposed B, panels, ...)."""
        key = f"{name}:{count}"
        if key not in self._scratch:
            self._scratch[key] = self.backend.alloc(count)
        return self._scratch[key]

    def result(self) -> np.ndarray:
        p = self.problem
        flat = self.backend.to_host(self.buf_c, p.batch * p.m * p.n)
        if p.batch == 1:
            return flat.reshape((p.m, p.n), order="F")
        return flat.reshape((p.batch, p.n, p.m)).transpose(0, 2, 1)


def _column_major(x: np.ndarray) -> np.ndarray:
    """A matrix, or a stack of them, as the kernels read it: each matrix column-major, one
    after the other."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)).ravel()


def workspace_buffers(problem: Problem, configs: Iterable[tuple[Rung, Mapping[str, int]]],
                      vendor_c: bool = True) -> list[tuple[str, int]]:
    """Every device buffer (name, floats) a Workspace comes to hold while these configurations
    run on it: A, B, C, their helpers' scratch, and (`vendor_c`) the C of a vendor BLAS
    reference, so that sizes can be refused before the first one is allocated."""
    p = problem
    buffers = {"A": p.batch * p.m * p.k, "B": p.batch * p.k * p.n, "C": p.batch * p.m * p.n}
    for rung, params in configs:
        for helper in rung.helpers_for(params):
            rows, cols = helper_rows(helper, p.m, p.n, p.k)
            buffers[scratch_name(helper)] = rows * cols
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
    what = f"M={problem.m} N={problem.n} K={problem.k}" + (
        f", {problem.batch} products" if problem.batch > 1 else "")
    check_memory(device, buffers, what=what)
    check_host_memory(f"checking {what} against its float64 reference",
                      problem.batch * checking_bytes(problem.m, problem.n, problem.k))


def median_time(launch: Callable[[], float], warmup: int, repeats: int) -> list[float]:
    for _ in range(warmup):
        launch()
    return [launch() for _ in range(max(1, repeats))]


def as_gemm_runs(device: Any, rung: Rung, params: Mapping[str, int],
                 problem: Problem) -> tuple[int | None, bool]:
    """K in the slices gemm() would split it into here, and whether gemm() would read B as it
    lies, so that a measured time is gemm()'s."""
    shape = (problem.m, problem.n, problem.k)
    return (slices_gemm_decides(device, rung.number, params, shape),
            reads_b_as_gemm(device, rung.number, params, shape))


def measured_macros(device: Any, rung: Rung, params: Mapping[str, int],
                    problem: Problem) -> dict[str, int]:
    """The macros `run_rung` builds the rung's own kernel with on `problem`, for a pre-builder
    whose warm-up runs a smaller problem (where K is not split, say)."""
    if problem.batch > 1:
        return stack_form_macros(rung, params)
    slices, reads_b = as_gemm_runs(device, rung, params, problem)
    return main_macros(rung, params, problem.m, problem.n,
                       slices_to_run(rung, params, problem.k, slices), reads_b)


def _call_launches(backend: Backend, prepared: Prepared) -> float:
    """Milliseconds of the launches a call of the configuration makes that its measured time
    counts: the rung's own and those that finish its product, and a pack that gemm() runs
    before every call of it (`Prepared.pack_in_call`: a panels form's). Without the pack, a
    CPU's tune would rank the panels by their kernel alone above forms that read the operands
    where they lie, whose one launch holds all the call's work, even where those run the call
    faster (results/pocl/self-packing)."""
    pack = prepared.time_helpers(backend) if prepared.pack_in_call else 0.0
    return pack + prepared.time_main(backend)


def run_rung(backend: Backend, ws: Workspace, rung: Rung, params: Mapping[str, int],
             repeats: int = 5, warmup: int = 1, tolerance: float = accuracy.TOLERANCE) -> RunResult:
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
        if p.batch > 1:
            prepared = prepare_stack(backend, rung, params, p.m, p.n, p.k, p.batch, ws.buf_a,
                                     ws.buf_b, ws.buf_c)
        else:
            slices, reads_b = as_gemm_runs(backend.device, rung, params, p)
            prepared = prepare(backend, rung, params, p.m, p.n, p.k, ws.buf_a, ws.buf_b,
                               ws.buf_c, rung.helpers_for(params), ws.scratch, slices, reads_b)
    except BuildError as exc:
        result.status, result.message = "build-failed", str(exc)
        return result

    try:
        prepared.time_helpers(backend)
        backend.fill(ws.buf_c, float("nan"), p.batch * p.m * p.n)
        prepared.time_main(backend)
        out = ws.result()
        err = accuracy.relative_error(out, ws.ref)
        result.rel_error = err
        if not err <= tolerance:
            result.status = "wrong"
            holes = accuracy.unwritten_count(out)
            result.message = (f"{holes} of {out.size} elements unwritten or NaN" if holes
                              else f"relative error {err:.2e} > {tolerance:.0e}")
            return result
        if prepared.helpers:
            helper_times = median_time(lambda: prepared.time_helpers(backend), 0, repeats)
            result.helper_ms = statistics.median(helper_times)
        result.times_ms = median_time(lambda: _call_launches(backend, prepared), warmup, repeats)
    except LaunchError as exc:
        result.status, result.message = "launch-failed", str(exc)
        return result
    except ClgemmError as exc:  # pragma: no cover - defensive: any other kernel-side failure
        result.status, result.message = "failed", str(exc)
        return result
    result.ms = statistics.median(result.times_ms)
    result.gflops = p.gflops(result.ms)
    return result


def time_numpy(ws: Workspace, repeats: int = 5) -> list[float]:
    """Wall times (ms) of the host's float32 A @ B through NumPy's BLAS, one per repeat (the
    caller takes the median and shows their spread: a shared host's BLAS varies widely)."""
    a, b = ws.a, ws.b
    a @ b  # warm-up (thread pool start, page faults)
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        a @ b
        times.append((time.perf_counter() - t0) * 1e3)
    return times
