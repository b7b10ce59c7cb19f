"""The checks of gemm()'s and gemm_buffers()'s arguments, each naming what is wrong before
anything is allocated or launched."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clgemm.backends import KINDS, Backend, DeviceArrays, array_kind, registry
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.core.memory_fit import INT_MAX
from clgemm.devices.info import DeviceInfo

FLOAT32_MAX = float(np.finfo(np.float32).max)


def scalar(name: str, value: Any) -> np.float32:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise ArgumentTypeError(f"{name} must be a real number, got {value!r}")
    try:
        as_float = float(value)
    except OverflowError:  # an int too large for any float
        as_float = math.inf
    # A finite value past float32's range would become Inf: refuse it rather than compute
    # with something the caller did not write. NaN and Inf given as such are kept (IEEE).
    if abs(as_float) > FLOAT32_MAX and (math.isfinite(as_float) or isinstance(value, int)):
        if not (abs(as_float) < FLOAT32_MAX * (1 + 2**-25)):  # rounds down onto the maximum
            raise UsageError(f"{name}={value!r} is outside float32's range (at most "
                             f"{FLOAT32_MAX:.6g} in magnitude)")
    return np.float32(as_float)


def flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def plain_scalars_and_flags(alpha: Any, beta: Any, trans_a: Any, trans_b: Any) -> bool:
    """Whether the scalars are plain Python numbers and the flags plain bools: only those may
    be part of a repeated call's key, so that a value that compares equal but would be refused
    (a NumPy bool, say) always goes through the checks."""
    return (type(trans_a) is bool and type(trans_b) is bool
            and type(alpha) in (float, int) and type(beta) in (float, int))


def size(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be a non-negative integer, got {value!r}")
    if not 0 <= value <= INT_MAX:
        raise UsageError(f"{name}={value} must be between 0 and {INT_MAX}")
    return int(value)


def check_backend_kind(kind: DeviceArrays, named: list[tuple[str, Any]],
                        backend_name: str | None, what: str = "array") -> None:
    """Device memory stays on its own backend: CuPy arrays cannot go to OpenCL, nor pyopencl
    arrays (or buffers) to CUDA."""
    if backend_name is not None and backend_name != kind.backend:
        wanted = KINDS.get(backend_name)
        other = wanted.label if wanted is not None else registry.label(backend_name)
        hint = f"pass NumPy or {other} arrays" if what == "array" else f"pass {other} buffers"
        raise UsageError(f"{named[0][0]} is a {kind.label} {what}, which lives on the "
                         f"{kind.backend} backend, but the {backend_name} backend was asked for "
                         f"(on {backend_name}, {hint})")


def one_kind(named: list[tuple[str, Any]], kinds: list[DeviceArrays], what: str) -> None:
    """Device arrays (or buffers) of different backends cannot meet in one call."""
    for (name, _), kind in zip(named[1:], kinds[1:]):
        if kind is not kinds[0]:
            raise UsageError(f"{named[0][0]} is a {kinds[0].label} {what} and {name} a "
                             f"{kind.label} {what}: they live on different backends and cannot "
                             f"be used in one call")


def check_array(name: str, x: Any) -> DeviceArrays | None:
    """The array's device kind (None for NumPy), once it is known to be a float32 matrix."""
    kind = None
    if not isinstance(x, np.ndarray):
        kind = array_kind(x)
        if kind is None:
            types = " or ".join(["a NumPy array", *(f"a {k.array_type}" for k in KINDS.values())])
            raise ArgumentTypeError(f"{name} must be {types}, got {type(x).__name__}")
    if x.dtype != np.float32:
        raise ArgumentTypeError(f"{name} has dtype {x.dtype}; gemm supports float32 only "
                                f"(convert with {name}.astype(numpy.float32))")
    if x.ndim < 2:
        raise UsageError(f"{name} must be 2-D or more (a matrix, or a stack of matrices), got "
                         f"shape {tuple(x.shape)}")
    return kind


def pick_backend(on_device: list[tuple[str, Any]], kind: DeviceArrays | None, device: Any,
                  backend: Any) -> Backend:
    """The backend of the call: the device arrays' own (checked against `device` and `backend`
    where given), else the one asked for, else $CLGEMM_DEVICE's or the first CPU device's."""
    backend_obj, backend_name = registry.split_backend(backend)
    if kind is not None:
        check_backend_kind(kind, on_device, backend_name)
        if isinstance(device, DeviceInfo) and device.backend != kind.backend:
            raise UsageError(f"{on_device[0][0]} is a {kind.label} array, which lives on the "
                             f"{kind.backend} backend, but device '{device.name}' is on the "
                             f"{device.backend} backend")
    info = None
    if device is not None:
        info = registry.device_info(device, backend_name
                                    or (kind.backend if kind is not None else None))
        if backend_obj is not None and (info.backend != backend_obj.name
                                        or info.handle != backend_obj.device.handle):
            raise UsageError(f"device '{info.name}' is not the backend's device "
                             f"'{backend_obj.device.name}'")
    if kind is None:
        if backend_obj is not None:
            return backend_obj
        return registry.shared_backend(info or registry.device_info(None, backend_name))
    return kind.backend_for(on_device, info, backend_obj)
