"""The devices of every backend, and one backend per device for the whole process.

Numbering: OpenCL platforms sorted by name, devices in each platform's own order, then CUDA's
devices. Sorting by name keeps the numbers the same whichever ICD loader enumerates the
platforms (loaders differ in order).

Builds are cached per backend, and a build is what costs (seconds on PoCL, tens of milliseconds
through NVRTC), so every library call on a device must find the same backend. Arrays made in a
caller's own OpenCL context can only be used by a backend in that context, so OpenCL backends are
also kept per (context, device); CUDA has one context per device, and CuPy arrays name their
device.
"""

from __future__ import annotations

import threading
from typing import Any

from clgemm.backends import cuda, opencl
from clgemm.backends.base import Backend, DeviceArrays, VendorBlas
from clgemm.core import settings
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.devices.info import DeviceInfo, pick_device

#: every backend package, in numbering order
PACKAGES = {opencl.NAME: opencl, cuda.NAME: cuda}
BACKEND_NAMES = tuple(PACKAGES)

_LOCK = threading.RLock()
#: one backend per device opened here, keyed by (backend name, device handle)
_BY_DEVICE: dict[tuple[str, Any], Backend] = {}
#: OpenCL backends by (context, device), including those adopted from callers' arrays
_BY_CONTEXT: dict[tuple[int, int], opencl.OpenCLBackend] = {}
#: device selections, remembered: listing devices queries every platform, too slow per call
_SELECTED: dict[tuple[str, str | None], DeviceInfo] = {}


def list_devices() -> list[DeviceInfo]:
    """Every device of every available backend, numbered from 0."""
    found = [d for package in PACKAGES.values() for d in package.discover()]
    for i, dev in enumerate(found):
        dev.index = i
    return found


def _named(spec: str | int) -> str | int:
    """A device named by a blank string would be matched by every name (the empty string is
    part of all of them), so the first device would be taken without being chosen."""
    if isinstance(spec, str) and not spec.strip():
        raise UsageError(f"device {spec!r}: an empty name names no device; give an index or a "
                         f"part of a name (see 'clgemm devices')")
    return spec


def select_device(spec: str | int | None, backend: str | None = None) -> DeviceInfo:
    """A listed device by index or name part; None: $CLGEMM_DEVICE's, else the first CPU
    device (see `pick_device`). A $CLGEMM_DEVICE that picks nothing (blanks included) is
    refused as a --device would be, naming the variable."""
    env = settings.device() if spec is None else None
    if env is None:
        return pick_device(list_devices(), spec if spec is None else _named(spec), backend)
    try:
        return pick_device(list_devices(), env, backend)
    except UsageError as exc:
        raise UsageError(f"{settings.DEVICE}={env}: {exc}") from None


def open_backend(device: DeviceInfo) -> Backend:
    """A new backend (context, queue or stream) of its own for the device: the measuring
    commands open one each, and their builds are theirs."""
    return PACKAGES[device.backend].open_backend(device)


def vendor_blas(backend: str) -> VendorBlas:
    """The vendor SGEMM a backend is compared with."""
    return PACKAGES[backend].VENDOR


def versions() -> dict[str, object]:
    """The versions of every backend library that is installed, for provenance."""
    return {k: v for package in PACKAGES.values() for k, v in package.versions().items()}


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
    """A device by index, name part or DeviceInfo (None: $CLGEMM_DEVICE's, else the first CPU
    device, or with `backend` that backend's first device), only among `backend`'s devices when
    given."""
    if isinstance(device, DeviceInfo):
        if backend is not None and device.backend != backend:
            raise UsageError(f"device '{device.name}' is on the {device.backend} backend, not "
                             f"{backend}")
        return device
    key = (f"${settings.DEVICE}={settings.device()}" if device is None else str(device).strip(),
           backend)
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


def shared_backend(info: DeviceInfo) -> Backend:
    """The process-wide backend of a device, opened on first use."""
    key = (info.backend, getattr(info.handle, "int_ptr", info.handle))
    with _LOCK:
        if key not in _BY_DEVICE:
            backend = PACKAGES[info.backend].open_shared(info)
            if info.backend == opencl.NAME:
                _BY_CONTEXT[(backend.context.int_ptr, info.handle.int_ptr)] = backend
            _BY_DEVICE[key] = backend
        return _BY_DEVICE[key]


def backend_in_context(context: Any, device: Any) -> opencl.OpenCLBackend:
    """The OpenCL backend of a pyopencl context and one of its devices (a caller's arrays')."""
    with _LOCK:
        key = (context.int_ptr, device.int_ptr)
        if key not in _BY_CONTEXT:
            info = next((d for d in list_devices() if d.handle == device), None)
            if info is None:
                raise UsageError(f"the device '{device.name.strip()}' is not among the devices "
                                 f"clgemm lists (see 'clgemm devices')")
            _BY_CONTEXT[key] = opencl.OpenCLBackend.in_context(context, info)
        return _BY_CONTEXT[key]


def clear(backends: bool = False) -> None:
    """Forget device selections; with `backends`, also the backends and their built kernels."""
    with _LOCK:
        _SELECTED.clear()
        if backends:
            _BY_DEVICE.clear()
            _BY_CONTEXT.clear()


#: the device array libraries, by backend name
KINDS: dict[str, DeviceArrays] = {
    opencl.NAME: opencl.PyOpenCLArrays(backend_in_context),
    cuda.NAME: cuda.CuPyArrays(shared_backend, cuda_device_info),
}


def array_kind(x: Any) -> DeviceArrays | None:
    """The adapter of a device array, or None (NumPy arrays, and anything else)."""
    return next((k for k in KINDS.values() if k.is_array(x)), None)


def buffer_kind(x: Any) -> DeviceArrays | None:
    """The adapter of a buffer gemm_buffers takes, or None."""
    return next((k for k in KINDS.values() if k.is_buffer(x)), None)
