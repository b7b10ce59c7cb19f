"""The backends `gemm` and `gemm_buffers` run on: one per device for the whole process.

Builds are cached per backend, and a build is what costs (seconds on PoCL, tens of milliseconds
through NVRTC), so every call on a device must find the same backend. Arrays made in a caller's
own OpenCL context can only be used by a backend in that context, so OpenCL backends are also
kept per (context, device); CUDA has one context per device, and CuPy arrays name their device.
"""

from __future__ import annotations

import threading
from typing import Any

from .backends import open_backend
from .backends.base import Backend
from .devices import DeviceInfo, list_devices, select_device
from .errors import ArgumentTypeError, UsageError

BACKEND_NAMES = ("opencl", "cuda")

_LOCK = threading.RLock()
#: one backend per device we opened ourselves, keyed by (backend name, device handle)
_BY_DEVICE: dict[tuple[str, Any], Backend] = {}
#: OpenCL backends by (context, device), including those adopted from callers' queues
_BY_CONTEXT: dict[tuple[int, int], Backend] = {}
#: serialises launches per backend: kernel objects are shared and set_args is not thread-safe
_LAUNCH_LOCKS: dict[int, threading.Lock] = {}
#: device selections, remembered: listing devices queries every platform, too slow per call
_SELECTED: dict[tuple[str | None, str | None], DeviceInfo] = {}


def split_backend(backend: Any) -> tuple[Backend | None, str | None]:
    """The `backend` argument of gemm: a Backend object, a backend's name, or None."""
    if backend is None:
        return None, None
    if isinstance(backend, Backend):
        return backend, backend.name
    if isinstance(backend, str) and backend.strip().lower() in BACKEND_NAMES:
        return None, backend.strip().lower()
    error = UsageError if isinstance(backend, str) else ArgumentTypeError
    raise error(f"backend must be one of {', '.join(map(repr, BACKEND_NAMES))} or a clgemm "
                     f"backend object, got {backend!r}")


def device_info(device: DeviceInfo | str | int | None, backend: str | None = None) -> DeviceInfo:
    """A device by index, name part or DeviceInfo (None: the first CPU device, or with `backend`
    that backend's first device), only among `backend`'s devices when given."""
    if isinstance(device, DeviceInfo):
        if backend is not None and device.backend != backend:
            raise UsageError(f"device '{device.name}' is on the {device.backend} backend, not "
                             f"{backend}")
        return device
    key = (None if device is None else str(device).strip(), backend)
    with _LOCK:
        if key not in _SELECTED:
            _SELECTED[key] = select_device(device, backend=backend)
        return _SELECTED[key]


def cuda_device_info(ordinal: int) -> DeviceInfo:
    """The listed CUDA device with this ordinal (what a CuPy array's `.device.id` says)."""
    key = (f"cuda ordinal {ordinal}", "cuda")
    with _LOCK:
        if key not in _SELECTED:
            found = [d for d in list_devices() if d.backend == "cuda" and d.handle == ordinal]
            if not found:
                raise UsageError(f"CUDA device {ordinal} is not among the devices clgemm lists "
                                 f"(see 'clgemm devices')")
            _SELECTED[key] = found[0]
        return _SELECTED[key]


def _register(backend: Backend) -> Backend:
    if backend.name == "opencl":
        _BY_CONTEXT[(backend.context.int_ptr, backend.device.handle.int_ptr)] = backend
    _LAUNCH_LOCKS[id(backend)] = threading.Lock()
    return backend


def _open(info: DeviceInfo) -> Backend:
    if info.backend == "cuda":
        # Opening a CUDA backend makes its device current; the caller's stays current after.
        from .backends.cuda import device_scope

        with device_scope(info.handle):
            return open_backend(info)
    return open_backend(info)


def backend_for(info: DeviceInfo) -> Backend:
    """The process-wide backend of a device, opened on first use."""
    key = (info.backend, getattr(info.handle, "int_ptr", info.handle))
    with _LOCK:
        if key not in _BY_DEVICE:
            _BY_DEVICE[key] = _register(_open(info))
        return _BY_DEVICE[key]


def backend_for_queue(queue: Any) -> Backend:
    """The OpenCL backend in the context of a caller's pyopencl queue."""
    from .backends.opencl import OpenCLBackend

    with _LOCK:
        key = (queue.context.int_ptr, queue.device.int_ptr)
        if key not in _BY_CONTEXT:
            _register(OpenCLBackend.from_queue(queue))
        return _BY_CONTEXT[key]


def backend_for_context(context: Any, device: Any) -> Backend:
    """The OpenCL backend of a pyopencl context and one of its devices."""
    import pyopencl as cl

    with _LOCK:
        key = (context.int_ptr, device.int_ptr)
        if key not in _BY_CONTEXT:
            backend_for_queue(cl.CommandQueue(context, device))
        return _BY_CONTEXT[key]


def launch_lock(backend: Backend) -> threading.Lock:
    with _LOCK:
        return _LAUNCH_LOCKS.setdefault(id(backend), threading.Lock())


def clear(backends: bool = False) -> None:
    """Forget device selections; with `backends`, also the backends and their built kernels."""
    with _LOCK:
        _SELECTED.clear()
        if backends:
            _BY_DEVICE.clear()
            _BY_CONTEXT.clear()
            _LAUNCH_LOCKS.clear()
