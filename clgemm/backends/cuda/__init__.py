"""The CUDA backend, all of it: the backend (the .cl sources through NVRTC and CuPy), its array
adapter (CuPy arrays) and its vendor BLAS (cuBLAS). CuPy is optional: without it this backend
lists no devices. The names below describe it to the registry (`base.BackendPackage`)."""

from __future__ import annotations

from clgemm.backends.base import Lookups
from clgemm.backends.cuda.arrays import CuPyArrays
from clgemm.backends.cuda.backend import (CUDABackend, bus_id, cupy, device_scope, discover,
                                          open_backend, translate, versions)
from clgemm.backends.cuda.cublas import CuBLAS
from clgemm.devices.info import DeviceInfo

NAME = "cuda"
LABEL = "CUDA"
INSTALL_HINT = ("the CUDA backend needs CuPy (pip install cupy-cuda12x) and an NVIDIA GPU and "
                "driver")
ARRAY_LIBRARY = "cupy"
VENDOR = CuBLAS()

__all__ = ["ARRAY_LIBRARY", "INSTALL_HINT", "LABEL", "NAME", "VENDOR", "CUDABackend", "CuBLAS",
           "CuPyArrays", "bus_id", "cupy", "device_arrays", "device_scope", "discover", "open_backend",
           "open_shared", "versions", "translate"]


def device_arrays(lookups: Lookups) -> CuPyArrays:
    """The adapter of CuPy's arrays, with the registry's lookups."""
    return CuPyArrays(lookups)


def open_shared(device: DeviceInfo) -> CUDABackend:
    """A backend for the process-wide registry. Opening one makes its device current; the
    caller's current device is restored after, as a library call should leave it."""
    with device_scope(device.handle):
        return open_backend(device)
