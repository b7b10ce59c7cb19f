"""CuPy arrays as gemm's operands: read where they lie, on their own device and stream."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from clgemm.backends.base import (Backend, DeviceArrays, Lookups, Named, Operand,
                                  off_the_vectors, strided_operand)
from clgemm.backends.cuda.backend import cupy
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.devices.info import DeviceInfo



class CuPyArrays(DeviceArrays):
    """CuPy arrays. A kernel argument that is a CuPy array passes its data pointer, so an
    operand's buffer is a flat alias starting at the array's first element (offset 0)."""

    backend = "cuda"
    label = "CuPy"
    array_type = "cupy.ndarray"

    def __init__(self, lookups: Lookups):
        self.lookups = lookups
        self._lock = threading.RLock()
        #: listed devices by CUDA ordinal, remembered: listing queries every platform
        self._by_ordinal: dict[int, DeviceInfo] = {}

    def shared(self, info: DeviceInfo) -> Backend:
        """The process-wide backend of a listed device."""
        return self.lookups.shared(info)

    def by_ordinal(self, ordinal: int) -> DeviceInfo:
        """The listed CUDA device with this ordinal (what a CuPy array's `.device.id` says)."""
        with self._lock:
            if ordinal not in self._by_ordinal:
                found = [d for d in self.lookups.devices()
                         if d.backend == self.backend and d.handle == ordinal]
                if not found:
                    raise UsageError(f"CUDA device {ordinal} is not among the devices clgemm "
                                     f"lists (see 'clgemm devices')")
                self._by_ordinal[ordinal] = found[0]
            return self._by_ordinal[ordinal]

    def forget(self, backends: bool) -> None:
        with self._lock:
            self._by_ordinal.clear()

    def signature(self, x: Any) -> tuple | None:
        data = x.data
        if off_the_vectors(data.ptr, x.size):
            return None  # read through a copy (`readable`), which a repeated call cannot keep
        return (type(x), x.shape, x.strides, x.dtype.char, data.ptr % 4, data.device_id)

    def readable(self, x: Any) -> Any:
        # An operand read in place is passed as its first element's address, so one that
        # starts off the vectors is copied; CuPy's pool starts every allocation on 512 bytes.
        ptr = x.data.ptr
        if off_the_vectors(ptr, x.size) and ptr % 4 == 0:
            return x.copy(order="K")
        return x

    def basis(self, x: Any) -> tuple:
        # A CuPy array's memory and dtype are read-only attributes, but its shape may be set
        # (and its strides with it), and each read of either makes a new tuple: those two are
        # compared by value.
        return (x.data, x.dtype, x.shape, x.strides)

    def same_basis(self, x: Any, basis: tuple) -> bool:
        data, dtype, shape, strides = basis
        return (x.data is data and x.dtype is dtype and x.shape == shape
                and x.strides == strides)

    def is_array(self, x: Any) -> bool:
        return cupy is not None and isinstance(x, cupy.ndarray)

    def _alias(self, x: Any, count: int) -> Any:
        """A flat float32 array of `count` values starting at x's first element (no copy)."""
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

    def kernel_arg(self, x: Any) -> Any:
        # A launch passes an array's address: a view is its first element, where the operand
        # built on the first call began too.
        return x

    def allocation(self, x: Any) -> Any:
        # CuPy's memory objects of its own allocations never overlap; memory it did not
        # allocate (another library's, wrapped) may, so it is not vouched for.
        mem = x.data.mem
        return mem if type(mem).__name__ in ("Memory", "PooledMemory", "_Chunk") else None

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
            return self.shared(info)
        return self.shared(self.by_ordinal(ordinal))

    def queue_for(self, backend: Backend, named: Named) -> Any:
        # As CuPy's own operations: ordered on the current stream, no synchronisation.
        return None

    def empty(self, backend: Backend, named: Named, shape: tuple[int, ...]) -> Any:
        return cupy.empty(shape, dtype=cupy.float32)

    def memory_range(self, buf: Any, offset: int, count: int) -> tuple[Any, int, int]:
        # Device addresses are unique within the process (unified addressing), so an address
        # range alone says where the floats lie, whatever array or alias reaches them.
        start = int(buf.data.ptr) + 4 * offset
        return "cuda", start, start + 4 * count

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
        order = "F" if host.flags.f_contiguous and not host.flags.c_contiguous else "C"
        with backend.activate():
            return cupy.array(host, order=order)

    def download(self, x: Any) -> np.ndarray:
        return cupy.asnumpy(x)
