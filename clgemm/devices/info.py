"""What clgemm knows of a device (`DeviceInfo`), whichever backend found it, and how a user's
"--device 0" or "H100" picks one from a list. Finding the devices is the backends' job
(`clgemm.backends.list_devices`); this module stays below them, so every layer can name a device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Mapping

from clgemm.core.errors import UsageError
from clgemm.devices.family import family_of
from clgemm.devices.limits import DeviceLimits


@dataclass
class DeviceInfo:
    index: int
    backend: str
    platform: str
    name: str
    type: str
    vendor: str
    compute_units: int
    clock_mhz: int
    global_mem_bytes: int
    local_mem_bytes: int
    max_work_group_size: int
    max_work_item_sizes: tuple[int, ...]
    max_alloc_bytes: int
    driver_version: str
    version: str
    extensions: tuple[str, ...] = ()
    sub_group_sizes: tuple[int, ...] = ()
    #: compute capability ("9.0") where the device reports one (NVIDIA), else ""
    compute_capability: str = ""
    #: backend object (pyopencl.Device, CUDA ordinal, ...); never serialised
    handle: Any = field(default=None, repr=False, compare=False)

    @cached_property
    def key(self) -> str:
        """Stable, readable identity: backend, vendor, name, driver (a database never applies
        to another device or driver)."""
        text = f"{self.backend}-{self.vendor}-{self.name}-{self.driver_version}"
        return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")

    @cached_property
    def family(self) -> str:
        """What the device shares with others for which tuned configurations carry over."""
        return family_of(self.backend, self.vendor, self.name, self.type,
                         self.compute_capability or None)

    @property
    def is_cpu(self) -> bool:
        return self.type == "CPU"

    def limits(self) -> DeviceLimits:
        return DeviceLimits(
            max_work_group_size=self.max_work_group_size,
            max_work_item_sizes=tuple(self.max_work_item_sizes),
            local_mem_bytes=self.local_mem_bytes,
            compute_units=self.compute_units,
            device_type=self.type,
            extensions=frozenset(self.extensions),
            sub_group_sizes=tuple(self.sub_group_sizes),
            compute_capability=self.compute_capability,
        )

    def to_json(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self)
             if f.name not in ("handle", "extensions")}
        d["key"] = self.key
        d["family"] = self.family
        d["max_work_item_sizes"] = list(self.max_work_item_sizes)
        d["sub_group_sizes"] = list(self.sub_group_sizes)
        return d


def pick_device(devices: list[DeviceInfo], spec: str | int | None,
                backend: str | None = None, hints: Mapping[str, str] | None = None
                ) -> DeviceInfo:
    """By index, by case-insensitive name substring, or (None) the first CPU device, else the
    first device. Anything that matches nothing, or more than one device, is a UsageError.

    With `backend`, only that backend's devices are candidates. Indexes stay the global numbers
    that 'clgemm devices' prints, so the same number always means the same device; one that
    belongs to another backend is refused rather than silently replaced. A name such as "H100"
    that both NVIDIA's OpenCL and CUDA list is made unambiguous by the backend.

    `hints` says, per backend, what to install when it finds no device. The backends know that,
    and they sit above this module, so their registry passes it down."""
    hints = hints or {}
    if not devices and backend is None:
        raise UsageError("no device found: " + ("; ".join(hints.values()) if hints
                                                else "see 'clgemm devices'"))
    pool = devices
    if backend is not None:
        pool = [d for d in devices if d.backend == backend]
        if not pool:
            raise UsageError(f"backend {backend}: no {backend} device found; "
                             f"{hints.get(backend, 'see clgemm devices')}")
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        cpus = [d for d in pool if d.is_cpu]
        return cpus[0] if cpus else pool[0]
    text = str(spec).strip()
    if text.lstrip("-").isdigit():
        i = int(text)
        if not 0 <= i < len(devices):
            raise UsageError(f"device {i}: no such device (devices are numbered "
                             f"0-{len(devices) - 1}; see 'clgemm devices')")
        if backend is not None and devices[i].backend != backend:
            mine = ", ".join(f"{d.index}: {d.name}" for d in pool)
            raise UsageError(f"device {i} is {devices[i].name} on the {devices[i].backend} "
                             f"backend, not {backend} ({backend} devices: {mine})")
        return devices[i]
    hits = [d for d in pool if text.lower() in d.name.lower()]
    if not hits:
        hits = [d for d in pool if text.lower() in f"{d.platform} {d.name}".lower()]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise UsageError(f"device '{text}': no device name contains it (see 'clgemm devices')")
    names = "; ".join(f"{d.index}: {d.name} ({d.backend})" for d in hits)
    hint = " or a backend" if len({d.backend for d in hits}) > 1 else ""
    raise UsageError(f"device '{text}' matches several devices ({names}); give its index{hint}")
