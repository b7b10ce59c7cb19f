"""A repeated call's launch on OpenCL: the kernel's arguments are left standing between launches
(OpenCL keeps them), so a call sets only the buffers that changed and queues the range."""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any, Sequence

import numpy as np

from clgemm.backends.base import Arg, Backend, PreparedLaunch
from clgemm.core.errors import LaunchError

try:
    import pyopencl as cl
    import pyopencl.tools as cl_tools
except ImportError:  # pragma: no cover - pyopencl is a hard dependency, but stay importable
    pass


def scalar_arg(a: Any) -> Any:
    """A kernel argument as OpenCL takes it: ints as int32, floats as float32, buffers as they
    are."""
    if isinstance(a, (int, np.integer)):
        return np.int32(a)
    if isinstance(a, float):
        return np.float32(a)
    return a


def arg_key(a: Any) -> Any:
    """What tells two values of an argument apart: a buffer by its handle, a scalar by its
    value and whether it goes as a float."""
    if hasattr(a, "int_ptr"):
        return a.int_ptr
    return (type(a) is float or isinstance(a, np.floating), a)


class StandingArgs(PreparedLaunch):
    """A launch whose scalar arguments are set once and stay set while no other launch of the
    same kernel object changes them.

    The backend's `_last_args` says, per kernel, which argument values it holds now (the
    same record `enqueue` keeps): where this launch was the last to set them, only the
    buffers that differ from last time are set again, which on a repeated call is none
    (NVIDIA's OpenCL takes tens of microseconds per clSetKernelArg)."""

    def __init__(self, backend: Backend, kernel: Any, global_size: Sequence[int],
                 local_size: Sequence[int], args: Sequence[Arg], slots: Sequence[int]):
        super().__init__(backend, kernel, global_size, local_size, args, slots)
        self._values = [scalar_arg(a) for a in args]
        self._keys = [arg_key(a) for a in args]
        self._standing: dict[int, tuple[list[Any], list[Any]]] = getattr(backend, "_last_args")
        self._queue = getattr(backend, "queue")
        self._handle = kernel.int_ptr
        self._gws = (ctypes.c_size_t * len(self.global_size))(*self.global_size)
        self._lws = ((ctypes.c_size_t * len(self.local_size))(*self.local_size)
                     if self.local_size else None)
        self._enqueue = no_event_enqueue()

    def _keep(self, handle: int, buffers: Sequence[Any]) -> None:
        """Record this launch's arguments as the kernel's standing ones. A buffer from outside
        the pool is kept alive until the kernel's arguments change, so that its handle cannot
        be reused for another buffer meanwhile; kept in its slot's place (None for a pooled
        one), so that the next launch knows it by identity without asking for its handle."""
        self._standing[handle] = (self._keys, [None if isinstance(b, cl_tools.PooledBuffer)
                                               else b for b in buffers])

    def _bind(self, buffers: Sequence[Any]) -> None:
        """Set the kernel's arguments for this launch: all of them where another launch set
        them last, else only the buffers that changed."""
        kernel, keys, handle = self.kernel, self._keys, self._handle
        last = self._standing.get(handle)
        if last is None or last[0] is not keys:  # another launch set this kernel's args
            values = self._values
            for i, buf in zip(self.slots, buffers):
                values[i], keys[i] = buf, buf.int_ptr
            kernel.set_args(*values)
            for i in self.slots:
                values[i] = None  # the call's buffers are not kept past it
            self._keep(handle, buffers)
        else:
            changed = False
            for i, buf, held in zip(self.slots, buffers, last[1]):
                if buf is held:  # alive since it was set, so its handle is the one set
                    continue
                ptr = buf.int_ptr
                if keys[i] != ptr:
                    kernel.set_arg(i, buf)
                    keys[i], changed = ptr, True
            if changed:  # else the buffers kept last time hold these very handles
                self._keep(handle, buffers)

    def __call__(self, buffers: Sequence[Any], queue: Any,
                 wait_for: Sequence[Any] | None) -> Any:
        if self.backend._logged() is not None:  # measuring code wants every launch's event
            return super().__call__(buffers, queue, wait_for)
        try:
            self._bind(buffers)
            return cl.enqueue_nd_range_kernel(queue or self._queue, self.kernel, self.global_size,
                                              self.local_size, wait_for=wait_for or None)
        except cl.Error as exc:
            raise self._failed(str(exc)) from exc

    def _failed(self, why: str) -> LaunchError:
        """A failed launch: the kernel's arguments are no longer known, so the next launch sets
        them all."""
        self._standing.pop(self._handle, None)
        return LaunchError(f"launch failed: {why}")

    def queue_only(self, buffers: Sequence[Any], queue: Any,
                   wait_for: Sequence[Any] | None) -> None:
        """Without an event: pyopencl makes one for every launch, and NVIDIA's OpenCL takes
        several microseconds to make it, so the launches of a call that only its last one's
        event needs to cover go through the OpenCL library itself."""
        enqueue = self._enqueue
        if enqueue is None or self.backend._logged() is not None:
            self(buffers, queue, wait_for)
            return
        try:
            self._bind(buffers)
        except cl.Error as exc:
            raise self._failed(str(exc)) from exc
        waits = list(wait_for or ())
        handles = (ctypes.c_void_p * len(waits))(*[e.int_ptr for e in waits]) if waits else None
        status = enqueue((queue or self._queue).int_ptr, self._handle, len(self._gws), None,
                         self._gws, self._lws, len(waits), handles, None)
        if status != 0:
            raise self._failed(f"clEnqueueNDRangeKernel returned {status}")


_ENQUEUE: list[Any] = []


def no_event_enqueue() -> Any:
    """clEnqueueNDRangeKernel from the system's OpenCL library through ctypes, or None where it
    cannot be loaded. Any ICD loader takes pyopencl's handles: they lead to the vendor's
    dispatch table whichever loader made them."""
    if not _ENQUEUE:
        found = None
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
            found = lib.clEnqueueNDRangeKernel
            found.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t),
                              ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p]
            found.restype = ctypes.c_int
        except (OSError, AttributeError):
            found = None
        _ENQUEUE.append(found)
    return _ENQUEUE[0]
