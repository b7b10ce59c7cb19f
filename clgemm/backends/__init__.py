"""Backends: each turns kernel source into something launchable on its devices.

`base.Backend` is the whole interface the runner uses. A backend module whose runtime library is
missing simply finds no devices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..devices import DeviceInfo
    from .base import Backend

#: backend modules, in numbering order
BACKEND_MODULES = ("opencl", "cuda")


def _module(name: str):
    import importlib
    return importlib.import_module(f"{__name__}.{name}")


def discover_all() -> list["DeviceInfo"]:
    found: list = []
    for name in BACKEND_MODULES:
        found.extend(_module(name).discover())
    return found


def open_backend(device: "DeviceInfo") -> "Backend":
    """A ready backend (context, queue or stream) for the device."""
    return _module(device.backend).open_backend(device)
