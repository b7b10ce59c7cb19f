"""Vendor SGEMMs measured beside the ladder: what "fast" means on the device at hand.

Each rung is compared with the best library SGEMM the device has: cuBLAS on CUDA devices,
CLBlast on OpenCL devices, and NumPy's host BLAS always (the fallback when neither library is
there). A library result is checked against the float64 reference exactly as a rung's is, and one
that is wrong is reported as wrong and never used as the yardstick. A missing library is a note
in the table, not an error: the ladder runs wherever the rungs run.

Timing matches the rungs': device time from events, warm-up launches first, median of repeats.

* cuBLAS: `cublasSgemm` through CuPy's thin binding, on the ladder's own column-major buffers,
  timed with CUDA events. Plain FP32: the cuBLAS handle is put in its default math mode, where
  SGEMM never uses TF32 tensor cores (CuPy's own matmul would too, unless CUPY_TF32=1; calling
  cublasSgemm directly leaves no such switch to get wrong). The name says "TF32 off".
* CLBlast: `CLBlastSgemm` from libclblast through ctypes, on the ladder's pyopencl buffers and
  queue (their `int_ptr` handles). CLBlast hands back the event of its *last* kernel only, and an
  SGEMM may run helper kernels (pad, transpose) before it; so the time runs from a marker queued
  just before the call to the end of that last event, which covers every kernel of the call on
  the in-order queue (and a few microseconds of host enqueue time). Where the device cannot
  profile a marker, host wall time around the call and its completion is used, and the table
  says so.

Why ctypes and not pyclblast: PyPI has only a source distribution of pyclblast (1.4.0; `pip
download pyclblast --only-binary :all:` finds no wheel for CPython 3.11 or 3.12 on Linux), which
needs CLBlast's headers, CMake and a compiler to build, and the GPU machine cannot reach a
registry at all. One C function with a fixed signature needs only the shared library, which
Debian ships (libclblast1) and which the GPU machine gets from the same .deb.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import statistics
import time
from typing import Any, Callable

import numpy as np

from . import check
from .runner import Workspace, time_numpy

#: what a reference row holds: name, where, ms, gflops, rel_error, status, note, timing
Reference = dict

_CLBLAST_NAMES = ("libclblast.so.1", "libclblast.so", "libclblast.dylib", "clblast.dll")
_COL_MAJOR, _NO_TRANS = 102, 111  # CLBlastLayoutColMajor, CLBlastTransposeNo (clblast_c.h)
_clblast: tuple[Any, str] | None = None


def _row(name: str, where: str, status: str, note: str = "", ms: float | None = None,
         gflops: float | None = None, rel_error: float | None = None, timing: str = "") -> dict:
    return {"name": name, "where": where, "ms": ms, "gflops": gflops, "rel_error": rel_error,
            "status": status, "note": note, "timing": timing}


def _median(run: Callable[[], float], warmup: int, repeats: int) -> float:
    for _ in range(warmup):
        run()
    return statistics.median(run() for _ in range(max(1, repeats)))


def _judged(row: dict, result: np.ndarray, ws: Workspace, tolerance: float) -> dict:
    """Set rel_error and, if the library got the product wrong, the status and why."""
    err = check.relative_error(result, ws.ref)
    row["rel_error"] = err if np.isfinite(err) else None
    if not err <= tolerance:
        holes = check.unwritten_count(result)
        row["status"] = "wrong"
        row["note"] = (f"{holes} of {result.size} elements unwritten or NaN" if holes
                       else f"relative error {err:.2e} > {tolerance:.0e}; not used as reference")
    return row


# -- NumPy ---------------------------------------------------------------------------------------
def numpy_reference(ws: Workspace, repeats: int, tolerance: float = check.TOLERANCE) -> Reference:
    """The host's float32 BLAS through NumPy (wall time): always there, so always a yardstick."""
    name = "NumPy (host BLAS, float32)"
    row = _row(name, "host CPU", "ok", timing="host wall time")
    _judged(row, ws.a @ ws.b, ws, tolerance)
    if row["status"] == "ok":
        row["ms"] = time_numpy(ws, repeats)
        row["gflops"] = ws.problem.gflops(row["ms"])
    return row


# -- CLBlast ---------------------------------------------------------------------------------------
def load_clblast() -> tuple[Any, str]:
    """(library, "") or (None, why not). CLGEMM_CLBLAST_LIB may name the file to load."""
    global _clblast
    if _clblast is not None:
        return _clblast
    names = [os.environ.get("CLGEMM_CLBLAST_LIB", ""), *_CLBLAST_NAMES,
             ctypes.util.find_library("clblast") or ""]
    errors = []
    for name in filter(None, names):
        try:
            lib = ctypes.CDLL(name)
        except OSError as exc:
            if not str(exc).startswith(name):  # found, but something it needs is missing
                errors.append(str(exc))
            continue
        fn = lib.CLBlastSgemm
        fn.restype = ctypes.c_int
        size, ptr, f32 = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_float
        fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, size, size, size, f32,
                       ptr, size, size, ptr, size, size, f32, ptr, size, size,
                       ctypes.POINTER(ptr), ctypes.POINTER(ptr)]
        over = lib.CLBlastOverrideParameters
        over.restype = ctypes.c_int
        over.argtypes = [ptr, ctypes.c_char_p, ctypes.c_int, size,
                         ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(size)]
        _clblast = (lib, "")
        return _clblast
    if errors:  # e.g. libclblast is there but the system has no libOpenCL.so.1
        why = f"libclblast cannot be loaded: {errors[0]}"
    else:
        why = ("libclblast not found (Debian: apt-get install libclblast1; or set "
               "CLGEMM_CLBLAST_LIB to its path)")
    _clblast = (None, why)
    return _clblast


#: CLBlastPrecisionSingle (clblast_c.h)
_SINGLE = 32
_ROW_MAJOR = 101


def clblast_override(lib: Any, device: Any, kernel: str, params: dict[str, int]) -> None:
    """Make CLBlast use `params` for `kernel` ("Xgemm") on this pyopencl device from now on in
    this process, as its tuner's results are applied (CLBlastOverrideParameters)."""
    names = (ctypes.c_char_p * len(params))(*[k.encode() for k in params])
    values = (ctypes.c_size_t * len(params))(*[int(v) for v in params.values()])
    status = lib.CLBlastOverrideParameters(ctypes.c_void_p(device.int_ptr), kernel.encode(),
                                           _SINGLE, len(params), names, values)
    if status != 0:
        raise RuntimeError(f"CLBlastOverrideParameters returned status {status}")


def clblast_row_major(lib: Any, queue: Any, m: int, n: int, k: int, a: Any, b: Any,
                      c: Any) -> None:
    """C := A B on C-ordered (row-major) pyopencl buffers, as a CLBlast user calls it: queued on
    `queue`, CLBlast's own helper kernels and temporary buffers included, not waited for."""
    qptr = ctypes.c_void_p(queue.int_ptr)
    status = lib.CLBlastSgemm(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, m, n, k, 1.0, a.int_ptr, 0, k,
                              b.int_ptr, 0, n, 0.0, c.int_ptr, 0, n, ctypes.byref(qptr), None)
    if status != 0:
        raise RuntimeError(f"CLBlastSgemm returned status {status} (see clblast_c.h)")


def clblast_call(lib: Any, queue: Any, ws: Workspace, out: Any) -> Callable[[], float]:
    """One timed CLBlastSgemm of the workspace's current A and B into `out`: device time from a
    marker queued just before the call to the end of the last event CLBlast returns, or host wall
    time where the device cannot time markers. `call.timing["label"]` says which was used."""
    import pyopencl as cl

    p = ws.problem
    qptr = ctypes.c_void_p(queue.int_ptr)
    timing = {"label": "device clock, marker to last kernel end"}

    def call() -> float:
        t0 = time.perf_counter()
        marker = cl.enqueue_marker(queue)
        ev_ptr = ctypes.c_void_p()
        status = lib.CLBlastSgemm(_COL_MAJOR, _NO_TRANS, _NO_TRANS, p.m, p.n, p.k, 1.0,
                                  ws.buf_a.int_ptr, 0, p.m, ws.buf_b.int_ptr, 0, p.k, 0.0,
                                  out.int_ptr, 0, p.m, ctypes.byref(qptr), ctypes.byref(ev_ptr))
        if status != 0:
            raise RuntimeError(f"CLBlastSgemm returned status {status} (see clblast_c.h)")
        if not ev_ptr.value:
            queue.finish()
            timing["label"] = "host wall time"
            return (time.perf_counter() - t0) * 1e3
        event = cl.Event.from_int_ptr(ev_ptr.value, retain=False)  # we own CLBlast's event
        event.wait()
        wall = (time.perf_counter() - t0) * 1e3
        try:
            span = (event.profile.end - marker.profile.end) * 1e-6
        except cl.Error:
            span = -1.0
        # A device that does not time markers raises or reports zeros; a span longer than the
        # host's wall time around the call cannot be right either.
        if not 0 < span <= wall:
            timing["label"] = "host wall time"
            return wall
        return span

    call.timing = timing  # type: ignore[attr-defined]
    return call


def clblast_reference(backend: Any, ws: Workspace, warmup: int, repeats: int,
                      tolerance: float = check.TOLERANCE) -> Reference:
    """CLBlast's SGEMM on the ladder's OpenCL device, buffers and queue."""
    lib, why = load_clblast()
    name = "CLBlast SGEMM"
    where = backend.device.name
    if lib is None:
        return _row(name, where, "unavailable", why)
    p = ws.problem
    out = ws.scratch("clblast C", p.m * p.n)
    call = clblast_call(lib, backend.queue, ws, out)

    try:
        backend.fill(out, float("nan"), p.m * p.n)
        call()  # also builds CLBlast's kernels for this device (cached after)
        result = backend.to_host(out, p.m * p.n).reshape((p.m, p.n), order="F")
        row = _judged(_row(name, where, "ok"), result, ws, tolerance)
        if row["status"] == "ok":
            row["ms"] = _median(call, warmup, repeats)
            row["gflops"] = p.gflops(row["ms"])
            row["timing"] = call.timing["label"]
        return row
    except Exception as exc:  # a library failure is a finding about the library, not ours
        return _row(name, where, "failed", f"{type(exc).__name__}: {exc}")


# -- cuBLAS ----------------------------------------------------------------------------------------
def cublas_reference(backend: Any, ws: Workspace, warmup: int, repeats: int,
                     tolerance: float = check.TOLERANCE) -> Reference:
    """cuBLAS SGEMM (plain FP32) on the ladder's CUDA device and buffers."""
    name = "cuBLAS SGEMM (FP32, TF32 off)"
    where = backend.device.name
    try:
        import cupy
        from cupy_backends.cuda.libs import cublas
    except Exception as exc:
        return _row(name, where, "unavailable", f"CuPy's cuBLAS binding cannot be imported: {exc}")
    p = ws.problem
    out = ws.scratch("cublas C", p.m * p.n)
    alpha, beta = np.ones(1, np.float32), np.zeros(1, np.float32)
    try:
        handle = cupy.cuda.device.get_cublas_handle()
        cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
        if cublas.getMathMode(handle) != cublas.CUBLAS_DEFAULT_MATH:
            cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)

        def call() -> float:
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, p.m, p.n, p.k,
                         alpha.ctypes.data, ws.buf_a.data.ptr, p.m, ws.buf_b.data.ptr, p.k,
                         beta.ctypes.data, out.data.ptr, p.m)
            end.record()
            end.synchronize()
            return float(cupy.cuda.get_elapsed_time(start, end))

        backend.fill(out, float("nan"), p.m * p.n)
        call()
        result = backend.to_host(out, p.m * p.n).reshape((p.m, p.n), order="F")
        row = _judged(_row(name, where, "ok"), result, ws, tolerance)
        if row["status"] == "ok":
            row["ms"] = _median(call, warmup, repeats)
            row["gflops"] = p.gflops(row["ms"])
            row["timing"] = "CUDA events"
        return row
    except Exception as exc:
        return _row(name, where, "failed", f"{type(exc).__name__}: {exc}")


# -- the ladder's view --------------------------------------------------------------------------
VENDOR = {"opencl": clblast_reference, "cuda": cublas_reference}


def collect_references(backend: Any, ws: Workspace, warmup: int, repeats: int) -> list[Reference]:
    """NumPy's row, then the vendor library of the backend's kind (if it has one)."""
    rows = [numpy_reference(ws, repeats)]
    vendor = VENDOR.get(backend.name)
    if vendor is not None:
        rows.append(vendor(backend, ws, warmup, repeats))
    return rows


def baseline(references: list[Reference]) -> Reference | None:
    """The yardstick for "% of reference": the first vendor library that ran and was right,
    else NumPy's row when it was."""
    usable = [r for r in references if r.get("status", "ok") == "ok" and r.get("gflops")]
    vendors = [r for r in usable if not r["name"].startswith("NumPy")]
    return (vendors or usable or [None])[0]


def percent_of(gflops: float | None, base: Reference | None) -> float | None:
    if not gflops or base is None or not base.get("gflops"):
        return None
    return 100.0 * gflops / base["gflops"]
