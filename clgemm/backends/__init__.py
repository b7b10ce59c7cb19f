"""Backends: each turns kernel source into something launchable on its devices, and each lives
in one package with everything of its own (backend, array adapter, vendor BLAS): `opencl/`,
`cuda/`. `base` is the interface the rest of clgemm uses, and `base.BackendPackage` what a
package says of itself; `registry` holds the registered packages, lists the devices of every
backend and keeps one backend per device for the library. A backend whose runtime library is
missing simply finds no devices.
"""

from __future__ import annotations

from clgemm.backends.base import (Backend, BackendPackage, DeviceArrays, Lookups, Mat, Operand,
                                  PreparedLaunch, VendorBlas, host_operand)
from clgemm.backends.registry import (BACKEND_NAMES, KINDS, LABELS, PACKAGES, array_kind,
                                      array_libraries, array_library, array_signature,
                                      backend_in_context, buffer_kind, clear, cuda_device_info,
                                      device_info, install_hints, label, list_devices,
                                      open_backend, register, registered, select_device,
                                      shared_backend, split_backend, unregister, vendor_blas,
                                      versions)

__all__ = ["BACKEND_NAMES", "KINDS", "LABELS", "PACKAGES", "Backend", "BackendPackage",
           "DeviceArrays", "Lookups", "Mat", "Operand", "PreparedLaunch", "VendorBlas",
           "array_kind", "array_libraries", "array_library", "array_signature",
           "backend_in_context", "buffer_kind", "clear", "cuda_device_info", "device_info",
           "host_operand", "install_hints", "label", "list_devices", "open_backend", "register",
           "registered", "select_device", "shared_backend", "split_backend", "unregister",
           "vendor_blas", "versions"]
