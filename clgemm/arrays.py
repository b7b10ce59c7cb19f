"""How `gemm` reaches each kind of array: NumPy arrays through the host, pyopencl and CuPy arrays
in place, on their own device.

The BLAS layer only knows operands: a device buffer read as a column-major stored matrix (an
element offset, a leading dimension, and whether the stored matrix is the array transposed). One
adapter per kind of device array answers what differs between the kinds: is this array one of
mine, which buffer and leading dimension does it read as, which backend runs on it, how does
the caller's pending work on it finish, how is a new output made. `gemm_buffers` asks the same
adapters about raw buffers (pyopencl.Buffer; flat CuPy arrays). NumPy arrays need none of this:
they are copied to the device and back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import gemm_backends
from .backends.base import Backend
from .devices import DeviceInfo
from .errors import ArgumentTypeError, UsageError

Named = Sequence[tuple[str, Any]]


@dataclass
class Mat:
    """A column-major matrix in a device buffer: element (i, j) of the stored matrix is
    buf[offset + i + j*ld]; op(X) is the stored matrix, transposed when `trans`."""

    buf: Any
    offset: int
    ld: int
    trans: bool


@dataclass
class Operand:
    """How one array reaches the device: a buffer (existing or still to upload) seen as a
    column-major stored matrix, `c_order` meaning the stored matrix is the array transposed."""

    name: str
    array: Any
    c_order: bool
    ld: int
    offset: int = 0
    buf: Any = None

    def mat(self, trans: bool) -> Mat:
        return Mat(self.buf, self.offset, self.ld, trans != self.c_order)


def host_operand(name: str, x: np.ndarray, prefer_c: bool) -> Operand:
    """Contiguous arrays are used as they lie (C order read as the transpose); strided views are
    copied later, after the memory check, into the order that spares the device a transpose."""
    r, c = x.shape
    if x.flags.f_contiguous:
        return Operand(name, x, False, max(1, r))
    if x.flags.c_contiguous:
        return Operand(name, x, True, max(1, c))
    return Operand(name, x, prefer_c, max(1, c) if prefer_c else max(1, r))


def strided_operand(name: str, x: Any, buf: Any, offset: int, label: str) -> Operand:
    """A device array read in place: any view whose rows or columns are contiguous is a matrix
    with a leading dimension, which the pack kernels read directly. Strides are in bytes."""
    r, c = x.shape
    if r * c == 0:
        return Operand(name, x, False, max(1, r), offset, buf)
    s0, s1 = x.strides
    if (r == 1 or s0 == 4) and (c == 1 or (s1 % 4 == 0 and s1 // 4 >= r)):
        return Operand(name, x, False, max(1, r) if c == 1 else s1 // 4, offset, buf)
    if (c == 1 or s1 == 4) and (r == 1 or (s0 % 4 == 0 and s0 // 4 >= c)):
        return Operand(name, x, True, max(1, c) if r == 1 else s0 // 4, offset, buf)
    raise UsageError(f"{name} is a {label} view with strides {tuple(x.strides)} bytes that gemm "
                     f"cannot read in place: one of the strides must be 4 (contiguous rows or "
                     f"columns) and the other a positive multiple of 4 spanning the matrix; make "
                     f"a contiguous copy first")


class DeviceArrays(ABC):
    """The arrays (and buffers) of one backend's array library."""

    #: the backend the arrays live on
    backend: str
    #: the library's name, as messages say it ("a CuPy array")
    label: str
    #: the array type, as messages say it
    array_type: str

    @abstractmethod
    def is_array(self, x: Any) -> bool:
        """Whether `x` is one of this library's arrays."""

    @abstractmethod
    def in_place(self, name: str, x: Any) -> Operand:
        """The 2-D array `x` as an operand read where it lies; a view it cannot read is refused."""

    @abstractmethod
    def buffer_of(self, x: Any) -> tuple[Any, int]:
        """The buffer and element offset of a contiguous array this module made (a new C)."""

    @abstractmethod
    def backend_for(self, named: Named, info: DeviceInfo | None,
                    backend: Backend | None) -> Backend:
        """The backend that can use all of these arrays where they are, checked against the
        device or backend the caller asked for, if any."""

    @abstractmethod
    def queue_for(self, backend: Backend, named: Named) -> Any:
        """Where the call's launches go so that they follow the work the caller queued on the
        arrays without waiting for it: the arrays' own queue (OpenCL) or the current stream
        (CUDA, None). Only work on some other queue is waited for."""

    @abstractmethod
    def empty(self, backend: Backend, named: Named, shape: tuple[int, int]) -> Any:
        """A new C-ordered float32 array beside the operands (under `backend.activate()`)."""

    # -- raw buffers (gemm_buffers) --
    @abstractmethod
    def is_buffer(self, x: Any) -> bool:
        """Whether `x` is a buffer `gemm_buffers` takes on this backend."""

    def check_buffer(self, name: str, x: Any) -> None:
        """Refuse a buffer of this kind that `gemm_buffers` cannot address (default: none)."""

    @abstractmethod
    def floats(self, x: Any) -> int:
        """How many float32 values the buffer holds."""

    @abstractmethod
    def buffers_backend(self, named: Named, queue: Any, backend: Backend | None) -> Backend:
        """The backend for these buffers, from the buffers, the queue or the backend passed."""

    @abstractmethod
    def buffers_queue(self, backend: Backend, queue: Any) -> Any:
        """Where gemm_buffers' launches go: the caller's queue, else the backend's own."""

    # -- test data (clgemm verify) --
    @abstractmethod
    def upload(self, backend: Backend, host: np.ndarray) -> Any:
        """A device copy of a host array, in the same memory order."""

    @abstractmethod
    def download(self, x: Any) -> np.ndarray:
        """A host copy of a device array."""


# -- pyopencl ----------------------------------------------------------------------------------
class PyOpenCLArrays(DeviceArrays):
    backend = "opencl"
    label = "pyopencl"
    array_type = "pyopencl.array.Array"

    @staticmethod
    def _cl() -> tuple[Any, Any]:
        try:
            import pyopencl as cl
            import pyopencl.array as cla
        except ImportError:  # pragma: no cover - pyopencl is a hard dependency
            return None, None
        return cl, cla

    def is_array(self, x: Any) -> bool:
        cla = self._cl()[1]
        return cla is not None and isinstance(x, cla.Array)

    def in_place(self, name: str, x: Any) -> Operand:
        if x.offset % 4:
            raise UsageError(f"{name} starts at byte offset {x.offset}, not a whole number of "
                             f"floats")
        return strided_operand(name, x, x.base_data, x.offset // 4, "pyopencl")

    def buffer_of(self, x: Any) -> tuple[Any, int]:
        return x.base_data, x.offset // 4

    def _context_of(self, named: Named) -> tuple[Any, Any]:
        """The one context (and device) the arrays share; a mismatch is refused."""
        first_name, first = named[0]
        for name, x in named[1:]:
            if x.context != first.context:
                raise UsageError(f"{first_name} and {name} live in different OpenCL contexts; "
                                 f"put them in one context (or pass NumPy arrays)")
        for _, x in named:
            if x.queue is not None:
                return first.context, x.queue.device
        devices = first.context.devices
        if len(devices) != 1:
            raise UsageError(f"{first_name} has no queue and its context has {len(devices)} "
                             f"devices: give the arrays a queue")
        return first.context, devices[0]

    def backend_for(self, named: Named, info: DeviceInfo | None,
                    backend: Backend | None) -> Backend:
        context, dev = self._context_of(named)
        if backend is not None:
            if backend.context != context:
                raise UsageError(f"{named[0][0]} lives in another OpenCL context than the "
                                 f"backend passed; use the arrays' context (or omit backend)")
            return backend
        if info is not None:
            if info.handle not in context.devices:
                raise UsageError(f"{named[0][0]} lives in an OpenCL context of device "
                                 f"'{dev.name.strip()}', not of the device asked for "
                                 f"('{info.name}')")
            dev = info.handle
        return gemm_backends.backend_for_context(context, dev)

    def queue_for(self, backend: Backend, named: Named) -> Any:
        queues: list[Any] = []
        for _, x in named:
            if x.queue is not None and not any(x.queue == q for q in queues):
                queues.append(x.queue)
        mine = [q for q in queues if q.device == backend.device.handle]
        chosen = mine[0] if mine else backend.queue
        for q in queues:
            if q != chosen:
                q.finish()
        return chosen

    def empty(self, backend: Backend, named: Named, shape: tuple[int, int]) -> Any:
        queue = self.queue_for(backend, named)
        return self._cl()[1].empty(queue, shape, np.float32, allocator=backend.pool(queue))

    def is_buffer(self, x: Any) -> bool:
        cl = self._cl()[0]
        return cl is not None and isinstance(x, cl.Buffer)

    def floats(self, x: Any) -> int:
        return x.size // 4

    def buffers_backend(self, named: Named, queue: Any, backend: Backend | None) -> Backend:
        if backend is None:
            if queue is not None:
                backend = gemm_backends.backend_for_queue(queue)
            else:
                devices = named[0][1].context.devices
                if len(devices) != 1:
                    raise UsageError(f"the buffers' context has {len(devices)} devices: pass the "
                                     f"queue to run on")
                backend = gemm_backends.backend_for_context(named[0][1].context, devices[0])
        elif queue is not None and queue.context != backend.context:
            raise UsageError("queue and backend belong to different OpenCL contexts")
        for name, buf in named:
            if buf.context != backend.context:
                raise UsageError(f"buffer {name} belongs to another OpenCL context than the "
                                 f"{'queue' if queue is not None else 'backend'} it was given "
                                 f"with")
        return backend

    def buffers_queue(self, backend: Backend, queue: Any) -> Any:
        return queue if queue is not None else backend.queue

    def upload(self, backend: Backend, host: np.ndarray) -> Any:
        return self._cl()[1].to_device(backend.queue, host)

    def download(self, x: Any) -> np.ndarray:
        return x.get()


# -- CuPy --------------------------------------------------------------------------------------
class CuPyArrays(DeviceArrays):
    """CuPy arrays. A kernel argument that is a CuPy array passes its data pointer, so an
    operand's buffer is a flat alias starting at the array's first element (offset 0)."""

    backend = "cuda"
    label = "CuPy"
    array_type = "cupy.ndarray"

    @staticmethod
    def _cupy() -> Any:
        from .backends.cuda import cupy  # None where CuPy is missing or broken

        return cupy

    def is_array(self, x: Any) -> bool:
        cupy = self._cupy()
        return cupy is not None and isinstance(x, cupy.ndarray)

    def _alias(self, x: Any, count: int) -> Any:
        """A flat float32 array of `count` values starting at x's first element (no copy)."""
        cupy = self._cupy()
        return cupy.ndarray((count,), dtype=cupy.float32, memptr=x.data)

    def in_place(self, name: str, x: Any) -> Operand:
        if x.size and x.data.ptr % 4:
            raise UsageError(f"{name} starts at device address {x.data.ptr:#x}, not on a float "
                             f"boundary")
        op = strided_operand(name, x, None, 0, "CuPy")
        if x.size:
            r, c = x.shape
            s0, s1 = x.strides
            # The last element's distance from the first; the strides that matter are positive.
            span = (r - 1) * (s0 // 4) + (c - 1) * (s1 // 4) + 1
            op.buf = self._alias(x, span)
        return op

    def buffer_of(self, x: Any) -> tuple[Any, int]:
        return self._alias(x, max(1, x.size)), 0

    @staticmethod
    def _ordinal(named: Named) -> int:
        first_name, first = named[0]
        for name, x in named[1:]:
            if x.device.id != first.device.id:
                raise UsageError(f"{first_name} is on CUDA device {first.device.id} and {name} on "
                                 f"CUDA device {x.device.id}: put them on one device (or pass "
                                 f"NumPy arrays)")
        return int(first.device.id)

    def backend_for(self, named: Named, info: DeviceInfo | None,
                    backend: Backend | None) -> Backend:
        ordinal = self._ordinal(named)
        first = named[0][0]
        if backend is not None:
            if backend.device.handle != ordinal:
                raise UsageError(f"{first} is on CUDA device {ordinal}, but the backend passed "
                                 f"runs on CUDA device {backend.device.handle} "
                                 f"('{backend.device.name}'); omit backend to use the arrays' "
                                 f"device")
            return backend
        if info is not None:
            if info.handle != ordinal:
                raise UsageError(f"{first} is on CUDA device {ordinal}, not on the device asked "
                                 f"for ('{info.name}', CUDA device {info.handle}); omit device "
                                 f"to use the arrays' device")
            return gemm_backends.backend_for(info)
        return gemm_backends.backend_for(gemm_backends.cuda_device_info(ordinal))

    def queue_for(self, backend: Backend, named: Named) -> Any:
        # As CuPy's own operations: ordered on the current stream, no synchronisation.
        return None

    def empty(self, backend: Backend, named: Named, shape: tuple[int, int]) -> Any:
        cupy = self._cupy()
        return cupy.empty(shape, dtype=cupy.float32)

    def is_buffer(self, x: Any) -> bool:
        return self.is_array(x)

    def check_buffer(self, name: str, x: Any) -> None:
        if x.dtype != np.float32:
            raise ArgumentTypeError(f"{name} has dtype {x.dtype}; gemm_buffers takes float32 "
                                    f"buffers only")
        if x.ndim != 1:
            raise UsageError(f"{name} must be a flat (1-D) CuPy array, got shape "
                             f"{tuple(x.shape)}; pass {name}.ravel() (for matrices use "
                             f"clgemm.gemm)")
        if x.size > 1 and x.strides[0] != 4:
            raise UsageError(f"{name} is a strided CuPy view (stride {x.strides[0]} bytes); "
                             f"gemm_buffers needs contiguous buffers")
        if x.size and x.data.ptr % 4:
            raise UsageError(f"{name} starts at device address {x.data.ptr:#x}, not on a float "
                             f"boundary")

    def floats(self, x: Any) -> int:
        return int(x.size)

    def buffers_backend(self, named: Named, queue: Any, backend: Backend | None) -> Backend:
        if queue is not None:
            raise UsageError("queue is an OpenCL command queue; CuPy buffers run on the current "
                             "CUDA stream of their device (leave queue out)")
        return self.backend_for(named, None, backend)

    def buffers_queue(self, backend: Backend, queue: Any) -> Any:
        return None

    def upload(self, backend: Backend, host: np.ndarray) -> Any:
        cupy = self._cupy()
        order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
        with backend.activate():
            return cupy.array(host, order=order)

    def download(self, x: Any) -> np.ndarray:
        return self._cupy().asnumpy(x)


#: the device array libraries, by backend name
KINDS: dict[str, DeviceArrays] = {"opencl": PyOpenCLArrays(), "cuda": CuPyArrays()}


def array_kind(x: Any) -> DeviceArrays | None:
    """The adapter of a device array, or None (NumPy arrays, and anything else)."""
    return next((k for k in KINDS.values() if k.is_array(x)), None)


def buffer_kind(x: Any) -> DeviceArrays | None:
    """The adapter of a buffer gemm_buffers takes, or None."""
    return next((k for k in KINDS.values() if k.is_buffer(x)), None)
