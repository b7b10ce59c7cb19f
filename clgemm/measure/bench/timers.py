"""Timers on one input set: a rung prepared as the runner prepares it, NumPy, the backend's
vendor SGEMM. Each is made (buffers allocated and touched) before any timing starts."""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from clgemm.backends import vendor_blas
from clgemm.configs.launch import prepare
from clgemm.measure.bench.engine import Timer
from clgemm.measure.rung_runner import Workspace


def _rung_timer(backend: Any, ws: Workspace, rung: Any, params: dict) -> Timer:
    """The configuration prepared as `runner.run_rung` prepares it (builds are cached per
    backend, so nothing compiles again). Returns (kernel, helpers) ms."""
    p = ws.problem
    prepared = prepare(backend, rung, params, p.m, p.n, p.k, ws.buf_a, ws.buf_b, ws.buf_c,
                       rung.helpers_for(params), ws.scratch)
    prepared.time_helpers(backend)  # writes the helpers' buffers once: no first touch timed

    def timed(_: int) -> tuple[float, ...]:
        if not prepared.helpers:
            return (prepared.time_main(backend),)
        h = prepared.time_helpers(backend)
        return prepared.time_main(backend), h

    return timed


def _numpy_timer(ws: Workspace) -> Timer:
    """A @ B into a C allocated (and touched) once, as the rungs write into theirs; a fresh
    `a @ b` would also time the allocation and first touch of C."""
    a, b = ws.a, ws.b
    out = np.zeros((ws.problem.m, ws.problem.n), dtype=np.float32)

    def timed(_: int) -> float:
        t0 = time.perf_counter()
        np.matmul(a, b, out=out)
        return (time.perf_counter() - t0) * 1e3

    return timed


def _vendor_timer(backend: Any, ws: Workspace) -> Timer:
    """The backend's vendor SGEMM timed as `references.vendor_reference` times it, into a C
    touched once before timing (PoCL maps pages lazily)."""
    p = ws.problem
    vendor = vendor_blas(backend.name)
    out = ws.scratch(f"{vendor.key} C", p.m * p.n)
    backend.fill(out, 0.0, p.m * p.n)
    call = vendor.timed_sgemm(backend, p.m, p.n, p.k, ws.buf_a, ws.buf_b, out)

    def timed(_: int) -> float:
        return call()

    timed.timing = call.timing  # type: ignore[attr-defined]
    return timed


def _per_set(make: Callable[[Workspace], Timer], sets: list[Workspace]) -> Timer:
    """One timer over all input sets: call i runs on set i. All are made before timing starts,
    so every buffer is allocated and written once outside the timed calls."""
    made = [make(ws) for ws in sets]

    def timed(i: int):
        return made[i](i)

    timed.made = made  # type: ignore[attr-defined]
    return timed


def _never(_: int) -> float:
    raise RuntimeError("not prepared")


def _timing_label(timer: Timer) -> str | None:
    """How a library contender was timed in the end ("host wall time" once any call fell back
    to it), or None where its timers do not say."""
    labels = {t.timing["label"] for t in getattr(timer, "made", []) if hasattr(t, "timing")}
    if not labels:
        return None
    return "host wall time" if "host wall time" in labels else labels.pop()
