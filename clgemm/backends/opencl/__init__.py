"""The OpenCL backend, all of it: the backend (pyopencl), its array adapter (pyopencl arrays and
buffers) and its vendor BLAS (CLBlast)."""

from __future__ import annotations

from clgemm.backends.opencl.arrays import PyOpenCLArrays
from clgemm.backends.opencl.backend import (OpenCLBackend, discover, find_nvidia_opencl,
                                            first_error, nvidia_icd_note, open_backend, versions)
from clgemm.backends.opencl.clblast import (CLBlast, clblast_override, clblast_row_major,
                                            load_clblast)
from clgemm.devices.info import DeviceInfo

NAME = "opencl"
VENDOR = CLBlast()

__all__ = ["NAME", "VENDOR", "CLBlast", "OpenCLBackend", "PyOpenCLArrays", "clblast_override",
           "clblast_row_major", "discover", "find_nvidia_opencl", "first_error", "load_clblast",
           "nvidia_icd_note", "open_backend", "open_shared", "versions"]


def open_shared(device: DeviceInfo) -> OpenCLBackend:
    """A backend for the process-wide registry (an OpenCL context names its device in every
    call, so opening one changes nothing for the caller)."""
    return open_backend(device)
