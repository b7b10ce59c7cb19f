"""The OpenCL backend, all of it: the backend (pyopencl), its array adapter (pyopencl arrays and
buffers) and its vendor BLAS (CLBlast). The names below describe it to the registry
(`base.BackendPackage`)."""

from __future__ import annotations

from clgemm.backends.base import Lookups
from clgemm.backends.opencl.arrays import PyOpenCLArrays
from clgemm.backends.opencl.backend import (OpenCLBackend, bus_id, discover, find_nvidia_opencl,
                                            first_error, nvidia_icd_note, open_backend, versions)
from clgemm.backends.opencl.clblast import (CLBlast, clblast_override, clblast_row_major,
                                            load_clblast)
from clgemm.devices.info import DeviceInfo

NAME = "opencl"
LABEL = "OpenCL"
INSTALL_HINT = "install an OpenCL driver (on Debian: apt-get install pocl-opencl-icd)"
ARRAY_LIBRARY = "pyopencl"
VENDOR = CLBlast()

__all__ = ["ARRAY_LIBRARY", "INSTALL_HINT", "LABEL", "NAME", "VENDOR", "CLBlast",
           "OpenCLBackend", "PyOpenCLArrays", "bus_id", "clblast_override", "clblast_row_major",
           "device_arrays", "discover", "find_nvidia_opencl", "first_error", "load_clblast",
           "nvidia_icd_note", "open_backend", "open_shared", "versions"]


def device_arrays(lookups: Lookups) -> PyOpenCLArrays:
    """The adapter of pyopencl's arrays, with the registry's lookups."""
    return PyOpenCLArrays(lookups)


def open_shared(device: DeviceInfo) -> OpenCLBackend:
    """A backend for the process-wide registry (an OpenCL context names its device in every
    call, so opening one changes nothing for the caller)."""
    return open_backend(device)
