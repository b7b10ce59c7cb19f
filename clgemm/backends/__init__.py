"""Backends: each turns kernel source into something launchable on its devices, and each lives
in one package with everything of its own (backend, array adapter, vendor BLAS): `opencl/`,
`cuda/`. `base` is the interface the rest of clgemm uses; `registry` lists the devices of every
backend and keeps one backend per device for the library. A backend whose runtime library is
missing simply finds no devices.
"""

from __future__ import annotations

from clgemm.backends.base import Backend, DeviceArrays, Mat, Operand, VendorBlas, host_operand
from clgemm.backends.registry import (BACKEND_NAMES, KINDS, PACKAGES, array_kind,
                                      backend_in_context, buffer_kind, clear, cuda_device_info,
                                      device_info, list_devices, open_backend, select_device,
                                      shared_backend, split_backend, vendor_blas, versions)

__all__ = ["BACKEND_NAMES", "KINDS", "PACKAGES", "Backend", "DeviceArrays", "Mat", "Operand",
           "VendorBlas", "array_kind", "backend_in_context", "buffer_kind", "clear",
           "cuda_device_info", "device_info", "host_operand", "list_devices", "open_backend",
           "select_device", "shared_backend", "split_backend", "vendor_blas", "versions"]
