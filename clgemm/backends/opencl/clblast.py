"""CLBlast, the OpenCL backend's vendor BLAS, through ctypes.

Why ctypes and not pyclblast: PyPI has only a source distribution of pyclblast (1.4.0; `pip
download pyclblast --only-binary :all:` finds no wheel for CPython 3.11 or 3.12 on Linux), which
needs CLBlast's headers, CMake and a compiler to build, and the GPU machine cannot reach a
registry at all. One C function with a fixed signature needs only the shared library, which
Debian ships (libclblast1) and which the GPU machine gets from the same .deb.

Timing: CLBlast hands back the event of its *last* kernel only, and an SGEMM may run helper
kernels (pad, transpose) before it; so a call is timed from a marker queued just before it to the
end of that last event, which covers every kernel of the call on the in-order queue (and a few
microseconds of host enqueue time). Where the device cannot profile a marker, host wall time
around the call and its completion is used, and the call's `timing` label says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from typing import Any, Mapping

import numpy as np

from clgemm.backends.base import Backend, TimedCall, VendorBlas
from clgemm.backends.opencl.backend import opencl_backend
from clgemm.core.settings import clblast_library

try:
    import pyopencl as cl
    import pyopencl.array as cla
except ImportError:  # pragma: no cover - pyopencl is a hard dependency, but stay importable:
    pass  # CLBlast is only ever called with an OpenCL backend, which cannot exist without it

_NAMES = ("libclblast.so.1", "libclblast.so", "libclblast.dylib", "clblast.dll")
#: CLBlastLayoutRowMajor, CLBlastLayoutColMajor, CLBlastTransposeNo, CLBlastPrecisionSingle
#: (clblast_c.h)
_ROW_MAJOR, _COL_MAJOR, _NO_TRANS, _SINGLE = 101, 102, 111, 32
_loaded: tuple[Any, str] | None = None


def load_clblast() -> tuple[Any, str]:
    """(library, "") or (None, why not). CLGEMM_CLBLAST_LIB may name the file to load."""
    global _loaded
    if _loaded is not None:
        return _loaded
    names = [clblast_library() or "", *_NAMES,
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
        batched = lib.CLBlastSgemmStridedBatched
        batched.restype = ctypes.c_int
        batched.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, size, size, size, f32,
                            ptr, size, size, size, ptr, size, size, size, f32, ptr, size, size,
                            size, size, ctypes.POINTER(ptr), ctypes.POINTER(ptr)]
        over = lib.CLBlastOverrideParameters
        over.restype = ctypes.c_int
        over.argtypes = [ptr, ctypes.c_char_p, ctypes.c_int, size,
                         ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(size)]
        _loaded = (lib, "")
        return _loaded
    if errors:  # e.g. libclblast is there but the system has no libOpenCL.so.1
        why = f"libclblast cannot be loaded: {errors[0]}"
    else:
        why = ("libclblast not found (Debian: apt-get install libclblast1; or set "
               "CLGEMM_CLBLAST_LIB to its path)")
    _loaded = (None, why)
    return _loaded


def clblast_override(lib: Any, device: Any, kernel: str, params: dict[str, int]) -> None:
    """Make CLBlast use `params` for `kernel` ("Xgemm") on this pyopencl device from now on in
    this process, as its tuner's results are applied (CLBlastOverrideParameters)."""
    names = (ctypes.c_char_p * len(params))(*[k.encode() for k in params])
    values = (ctypes.c_size_t * len(params))(*[int(v) for v in params.values()])
    status = lib.CLBlastOverrideParameters(ctypes.c_void_p(device.int_ptr), kernel.encode(),
                                           _SINGLE, len(params), names, values)
    if status != 0:
        raise RuntimeError(f"CLBlastOverrideParameters returned status {status}")


def _sgemm(lib: Any, queue: Any, layout: int, m: int, n: int, k: int, a: Any, lda: int, b: Any,
           ldb: int, c: Any, ldc: int, event: Any = None) -> None:
    qptr = ctypes.c_void_p(queue.int_ptr)
    status = lib.CLBlastSgemm(layout, _NO_TRANS, _NO_TRANS, m, n, k, 1.0, a.int_ptr, 0, lda,
                              b.int_ptr, 0, ldb, 0.0, c.int_ptr, 0, ldc, ctypes.byref(qptr),
                              event)
    if status != 0:
        raise RuntimeError(f"CLBlastSgemm returned status {status} (see clblast_c.h)")


def clblast_row_major_batched(lib: Any, queue: Any, count: int, m: int, n: int, k: int,
                              a: Any, a_stride: int, b: Any, b_stride: int, c: Any) -> None:
    """C[p] := A[p] B[p] for a stack of C-ordered matrices, one CLBlastSgemmStridedBatched
    (stride 0 repeats one matrix), queued on `queue`, not waited for."""
    qptr = ctypes.c_void_p(queue.int_ptr)
    status = lib.CLBlastSgemmStridedBatched(
        _ROW_MAJOR, _NO_TRANS, _NO_TRANS, m, n, k, 1.0, a.int_ptr, 0, k, a_stride, b.int_ptr,
        0, n, b_stride, 0.0, c.int_ptr, 0, n, m * n, count, ctypes.byref(qptr), None)
    if status != 0:
        raise RuntimeError(f"CLBlastSgemmStridedBatched returned status {status}")


def clblast_row_major(lib: Any, queue: Any, m: int, n: int, k: int, a: Any, b: Any,
                      c: Any) -> None:
    """C := A B on C-ordered (row-major) pyopencl buffers, as a CLBlast user calls it: queued on
    `queue`, CLBlast's own helper kernels and temporary buffers included, not waited for."""
    _sgemm(lib, queue, _ROW_MAJOR, m, n, k, a, k, b, n, c, n)


class CLBlast(VendorBlas):
    key = "clblast"
    label = "CLBlast"
    name = "CLBlast SGEMM"

    def missing(self) -> str | None:
        lib, why = load_clblast()
        return None if lib is not None else why

    def timed_sgemm(self, backend: Backend, m: int, n: int, k: int, a: Any, b: Any,
                    c: Any) -> TimedCall:
        lib, why = load_clblast()
        if lib is None:
            raise RuntimeError(why)
        queue = opencl_backend(backend, "CLBlast").queue
        timing = {"label": "device clock, marker to last kernel end"}

        def call() -> float:
            t0 = time.perf_counter()
            marker = cl.enqueue_marker(queue)
            ev_ptr = ctypes.c_void_p()
            _sgemm(lib, queue, _COL_MAJOR, m, n, k, a, m, b, k, c, m, ctypes.byref(ev_ptr))
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
            # A device that does not time markers raises or reports zeros; a span longer than
            # the host's wall time around the call cannot be right either.
            if not 0 < span <= wall:
                timing["label"] = "host wall time"
                return wall
            return span

        return TimedCall(call, timing)

    def matmul(self, backend: Backend, a: Any, b: Any, out: Any = None) -> Any:
        """CLBlastSgemm, row-major, on the arrays' buffers and queue (CLBlastSgemmStridedBatched
        on stacks of three dimensions); a new C from the backend's pool."""
        lib, why = load_clblast()
        if lib is None:
            raise RuntimeError(why)
        m, k = a.shape[-2:]
        n = b.shape[-1]
        ocl = opencl_backend(backend, "CLBlast")
        queue = a.queue if a.queue is not None else ocl.queue  # the arrays' own, as a user's
        if a.ndim > 2 or b.ndim > 2:  # C-ordered stacks; a 2-D operand repeats for every product
            count = a.shape[0] if a.ndim > 2 else b.shape[0]
            if out is None:
                out = cla.empty(queue, (count, m, n), np.float32, allocator=ocl.pool(queue))
            clblast_row_major_batched(lib, queue, count, m, n, k, a.base_data,
                                      m * k if a.ndim > 2 else 0, b.base_data,
                                      k * n if b.ndim > 2 else 0, out.base_data)
            return out
        if out is None:
            out = cla.empty(queue, (m, n), np.float32, allocator=ocl.pool(queue))
        clblast_row_major(lib, queue, m, n, k, a.base_data, b.base_data, out.base_data)
        return out

    def override(self, backend: Backend, params: Mapping[str, int]) -> None:
        lib, why = load_clblast()
        if lib is None:
            raise RuntimeError(why)
        clblast_override(lib, backend.device.handle, "Xgemm", dict(params))
