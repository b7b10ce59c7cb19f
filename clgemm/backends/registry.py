"""The backends clgemm knows, the devices of all of them, and one backend per device for the
whole process.

A backend joins by one `register(package)` (`base.BackendPackage`): its name, label, install
hint, array adapter, vendor BLAS and devices come from the package, and everything that names
backends (`PACKAGES`, `BACKEND_NAMES`, `KINDS`, the command line's `--backend`, clgemm verify's
device-array paths, the course's labels) reads them here. The two built-in backends register
the same way, below.

Numbering: OpenCL platforms sorted by name, devices in each platform's own order, then CUDA's
devices, then those of backends registered later, in the order they registered. Sorting by name
keeps the numbers the same whichever ICD loader enumerates the platforms (loaders differ in
order).

Builds are cached per backend, and a build is what costs (seconds on PoCL, tens of milliseconds
through NVRTC), so every library call on a device must find the same backend. Arrays made in a
caller's own OpenCL context can only be used by a backend in that context, so the OpenCL array
adapter also keeps backends per (context, device), the shared ones included (`adopt`); CUDA has
one context per device, and CuPy arrays name their device.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, cast

from clgemm.backends import cuda, opencl
from clgemm.backends.base import Backend, BackendPackage, DeviceArrays, Lookups, VendorBlas
from clgemm.core import settings
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.devices.info import DeviceInfo, pick_device

#: every registered backend package by name, in numbering order
PACKAGES: dict[str, BackendPackage] = {}
#: the registered backends' names (a live view: it follows `register` and `unregister`)
BACKEND_NAMES = PACKAGES.keys()
#: the device array libraries, by backend name (backends without one have no entry)
KINDS: dict[str, DeviceArrays] = {}

_LOCK = threading.RLock()
#: one backend per device opened here, keyed by (backend name, device handle)
_BY_DEVICE: dict[tuple[str, Any], Backend] = {}
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
        return pick_device(list_devices(), spec if spec is None else _named(spec), backend,
                           install_hints())
    try:
        return pick_device(list_devices(), env, backend, install_hints())
    except UsageError as exc:
        raise UsageError(f"{settings.DEVICE}={env}: {exc}") from None


def open_backend(device: DeviceInfo) -> Backend:
    """A new backend (context, queue or stream) of its own for the device: the measuring
    commands open one each, and their builds are theirs."""
    return PACKAGES[device.backend].open_backend(device)


def bus_id(device: DeviceInfo) -> str | None:
    """Where the device sits on the PCI bus, where its backend can say (an optional `bus_id`
    of a backend package); None where it cannot (a CPU, a backend without the question)."""
    ask = getattr(PACKAGES.get(device.backend), "bus_id", None)
    return ask(device) if ask is not None else None


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
    return cast(cuda.CuPyArrays, KINDS[cuda.NAME]).by_ordinal(ordinal)


def shared_backend(info: DeviceInfo) -> Backend:
    """The process-wide backend of a device, opened on first use."""
    key = (info.backend, getattr(info.handle, "int_ptr", info.handle))
    with _LOCK:
        if key not in _BY_DEVICE:
            backend = PACKAGES[info.backend].open_shared(info)
            kind = KINDS.get(info.backend)
            if kind is not None:
                kind.adopt(backend)
            _BY_DEVICE[key] = backend
        return _BY_DEVICE[key]


def backend_in_context(context: Any, device: Any) -> opencl.OpenCLBackend:
    """The OpenCL backend of a pyopencl context and one of its devices (a caller's arrays')."""
    return cast(opencl.PyOpenCLArrays, KINDS[opencl.NAME]).in_context(context, device)


def clear(backends: bool = False) -> None:
    """Forget device selections; with `backends`, also the backends and their built kernels."""
    with _LOCK:
        _SELECTED.clear()
        for kind in KINDS.values():
            kind.forget(backends)
        if backends:
            _BY_DEVICE.clear()


#: the adapter of each array type met so far (None: no backend's), since a repeated call asks
#: for each of its arrays'
_KIND_OF_TYPE: dict[type, DeviceArrays | None] = {}


def array_kind(x: Any) -> DeviceArrays | None:
    """The adapter of a device array, or None (NumPy arrays, and anything else)."""
    cls = type(x)
    try:
        return _KIND_OF_TYPE[cls]
    except KeyError:
        kind = next((k for k in KINDS.values() if k.is_array(x)), None)
        _KIND_OF_TYPE[cls] = kind
        return kind


def buffer_kind(x: Any) -> DeviceArrays | None:
    """The adapter of a buffer gemm_buffers takes, or None."""
    return next((k for k in KINDS.values() if k.is_buffer(x)), None)


def array_signature(x: Any) -> tuple | None:
    """What a gemm() call's checks depend on for a device array (`DeviceArrays.signature`);
    None for NumPy arrays, which are copied anyway, and for anything else."""
    kind = array_kind(x)  # remembered by type, NumPy's (None) included
    return None if kind is None else kind.signature(x)


# -- registration --------------------------------------------------------------------------------
_LOOKUPS = Lookups(shared=shared_backend, devices=list_devices)


def register(package: BackendPackage) -> BackendPackage:
    """Add a backend: its devices are listed after those registered before it, and every list
    of backends (the command line's, verify's, the course's labels) includes it from now on.
    A name already taken is refused rather than replaced, since the backends opened for it
    would stay behind."""
    name = package.NAME
    if not isinstance(name, str) or not name.strip() or name != name.strip().lower():
        raise UsageError(f"a backend's NAME must be a non-empty lower-case name, got {name!r}")
    with _LOCK:
        if name in PACKAGES:
            raise UsageError(f"a backend named {name!r} is registered already")
        kind = package.device_arrays(_LOOKUPS)
        PACKAGES[name] = package
        if kind is not None:
            KINDS[name] = kind
            _KIND_OF_TYPE.clear()
        _renumbered()
    return package


def unregister(name: str) -> None:
    """Remove a registered backend with the backends opened on its devices (a test's own
    backend, after the test). Device selections are forgotten: the numbering changes."""
    with _LOCK:
        if name not in PACKAGES:
            raise UsageError(f"no backend named {name!r} is registered")
        del PACKAGES[name]
        kind = KINDS.pop(name, None)
        _KIND_OF_TYPE.clear()
        if kind is not None:
            kind.forget(True)
        for key in [k for k in _BY_DEVICE if k[0] == name]:
            del _BY_DEVICE[key]
        _renumbered()


def _renumbered() -> None:
    """Devices remembered by selection carry their numbers, which a backend added or removed
    may change: forget them all."""
    _SELECTED.clear()
    for kind in KINDS.values():
        kind.forget(False)


@contextmanager
def registered(package: BackendPackage) -> Iterator[BackendPackage]:
    """The backend registered while the block runs, and unregistered after, however it ends."""
    register(package)
    try:
        yield package
    finally:
        unregister(package.NAME)


def label(name: str) -> str:
    """How text for people names a backend ("OpenCL"); a name no registered backend has (one
    in a committed result file, say) is shown as it is."""
    package = PACKAGES.get(name)
    return package.LABEL if package is not None else name


class BackendLabels(Mapping[str, str]):
    """The registered backends' labels by name, read when asked (a live view, as
    `BACKEND_NAMES` is), for code that looks labels up with `.get(name, name)`."""

    def __getitem__(self, name: str) -> str:
        return PACKAGES[name].LABEL

    def __iter__(self) -> Iterator[str]:
        return iter(list(PACKAGES))

    def __len__(self) -> int:
        return len(PACKAGES)


#: every registered backend's label by name ("opencl" -> "OpenCL")
LABELS: Mapping[str, str] = BackendLabels()


def install_hints() -> dict[str, str]:
    """What to install for each backend when it finds no device, by backend name."""
    return {name: package.INSTALL_HINT for name, package in PACKAGES.items()}


def array_library(name: str) -> str | None:
    """The array library of a backend whose arrays gemm() reads in place ("pyopencl"), which is
    also clgemm verify's name for its path through them; None for an unknown backend or one
    without device arrays."""
    package = PACKAGES.get(name)
    return package.ARRAY_LIBRARY if package is not None else None


def array_libraries() -> dict[str, str]:
    """The array library of every registered backend that has one, by backend name."""
    return {name: p.ARRAY_LIBRARY for name, p in PACKAGES.items() if p.ARRAY_LIBRARY is not None}


register(opencl)
register(cuda)


def register_modules(names: list[str]) -> None:
    """Register the backend package each module is ($CLGEMM_BACKENDS): a module that cannot be
    imported, or is no backend, is skipped with one warning, so that the built-in backends
    still work."""
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            warnings.warn(f"clgemm: {settings.BACKENDS}: {name} not imported ({exc})",
                          RuntimeWarning, stacklevel=2)
            continue
        if module.__dict__.get("NAME") in PACKAGES:
            continue  # registered by whoever imported it first
        try:
            register(module)
        except (UsageError, AttributeError, TypeError) as exc:
            warnings.warn(f"clgemm: {settings.BACKENDS}: {name} is no backend package ({exc})",
                          RuntimeWarning, stacklevel=2)



def _configured_modules() -> list[str]:
    """$CLGEMM_BACKENDS's modules; a value that names none is one warning, never a failure to
    import clgemm at all."""
    try:
        return settings.backend_modules()
    except UsageError as exc:
        warnings.warn(f"clgemm: {exc}", RuntimeWarning, stacklevel=2)
        return []


register_modules(_configured_modules())
