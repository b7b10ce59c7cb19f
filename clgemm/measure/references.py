"""Vendor SGEMMs measured beside the ladder: what "fast" means on the device at hand.

Each rung is compared with the best library SGEMM the device has: cuBLAS on CUDA devices,
CLBlast on OpenCL devices, and NumPy's host BLAS always (the fallback when neither library is
there). A library result is checked against the float64 reference exactly as a rung's is, and one
that is wrong is reported as wrong and never used as the yardstick. A missing library is a note
in the table, not an error: the ladder runs wherever the rungs run.

Timing matches the rungs': device time from events, warm-up launches first, median of repeats.

Each backend's package says how its library is called and timed (`backends/opencl/clblast.py`,
`backends/cuda/cublas.py`); this module judges and times them the same way for every backend.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

import numpy as np

from clgemm.backends import Backend, vendor_blas
from clgemm.core import accuracy
from clgemm.measure.rung_runner import Workspace, time_numpy

#: what a reference row holds: name, where, ms, gflops, rel_error, status, note, timing
Reference = dict


def _row(name: str, where: str, status: str, note: str = "", ms: float | None = None,
         gflops: float | None = None, rel_error: float | None = None, timing: str = "") -> dict:
    return {"name": name, "where": where, "ms": ms, "gflops": gflops, "rel_error": rel_error,
            "status": status, "note": note, "timing": timing}


def _times(run: Callable[[], float], warmup: int, repeats: int) -> list[float]:
    for _ in range(warmup):
        run()
    return [run() for _ in range(max(1, repeats))]


def _judged(row: dict, result: np.ndarray, ws: Workspace, tolerance: float) -> dict:
    """Set rel_error and, if the library got the product wrong, the status and why."""
    err = accuracy.relative_error(result, ws.ref)
    row["rel_error"] = err if np.isfinite(err) else None
    if not err <= tolerance:
        holes = accuracy.unwritten_count(result)
        row["status"] = "wrong"
        row["note"] = (f"{holes} of {result.size} elements unwritten or NaN" if holes
                       else f"relative error {err:.2e} > {tolerance:.0e}; not used as reference")
    return row


# -- NumPy ---------------------------------------------------------------------------------------
def numpy_reference(ws: Workspace, repeats: int, tolerance: float = accuracy.TOLERANCE) -> Reference:
    """The host's float32 BLAS through NumPy (wall time): always there, so always a yardstick."""
    name = "NumPy (host BLAS, float32)"
    row = _row(name, "host CPU", "ok", timing="host wall time")
    _judged(row, ws.a @ ws.b, ws, tolerance)
    if row["status"] == "ok":
        row["times_ms"] = time_numpy(ws, repeats)
        row["ms"] = statistics.median(row["times_ms"])
        row["gflops"] = ws.problem.gflops(row["ms"])
    return row


# -- the backend's vendor BLAS ---------------------------------------------------------------
def vendor_reference(backend: Backend, ws: Workspace, warmup: int, repeats: int,
                     tolerance: float = accuracy.TOLERANCE) -> Reference:
    """The backend's vendor SGEMM (CLBlast, cuBLAS) on the ladder's own device, buffers and
    queue or stream, judged and timed as a rung is."""
    vendor = vendor_blas(backend.name)
    where = backend.device.name
    why = vendor.missing()
    if why:
        return _row(vendor.name, where, "unavailable", why)
    p = ws.problem
    out = ws.scratch(f"{vendor.key} C", p.m * p.n)
    try:
        call = vendor.timed_sgemm(backend, p.m, p.n, p.k, ws.buf_a, ws.buf_b, out)
        backend.fill(out, float("nan"), p.m * p.n)
        call()  # also builds the library's kernels for this device (cached after)
        result = backend.to_host(out, p.m * p.n).reshape((p.m, p.n), order="F")
        row = _judged(_row(vendor.name, where, "ok"), result, ws, tolerance)
        if row["status"] == "ok":
            row["times_ms"] = _times(call, warmup, repeats)
            row["ms"] = statistics.median(row["times_ms"])
            row["gflops"] = p.gflops(row["ms"])
            row["timing"] = call.timing["label"]
        return row
    except Exception as exc:  # a library failure is a finding about the library, not ours
        return _row(vendor.name, where, "failed", f"{type(exc).__name__}: {exc}")


# -- the ladder's view --------------------------------------------------------------------------
def collect_references(backend: Any, ws: Workspace, warmup: int, repeats: int) -> list[Reference]:
    """NumPy's row, then the vendor library of the backend's kind (if it has one)."""
    rows = [numpy_reference(ws, repeats)]
    rows.append(vendor_reference(backend, ws, warmup, repeats))
    return rows


def baseline(references: list[Reference]) -> Reference | None:
    """The yardstick for "% of reference": the first vendor library that ran and was right,
    else NumPy's row when it was."""
    usable = [r for r in references if r.get("status", "ok") == "ok" and r.get("gflops")]
    vendors = [r for r in usable if not r["name"].startswith("NumPy")]
    found = vendors or usable
    return found[0] if found else None


def percent_of(gflops: float | None, base: Reference | None) -> float | None:
    if not gflops or base is None or not base.get("gflops"):
        return None
    return 100.0 * gflops / base["gflops"]
