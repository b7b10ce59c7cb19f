"""The device facts that rung constraints are checked against.

Kept apart from device discovery so that the registry and the tuner can reason about a device
(or a made-up one, in tests) without any OpenCL runtime present.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DeviceLimits:
    max_work_group_size: int = 1024
    max_work_item_sizes: tuple[int, ...] = (1024, 1024, 64)
    local_mem_bytes: int = 48 * 1024
    compute_units: int = 1
    device_type: str = "GPU"
    extensions: frozenset[str] = field(default_factory=frozenset)
    sub_group_sizes: tuple[int, ...] = ()
    #: "major.minor" where the device reports one (NVIDIA), else ""
    compute_capability: str = ""

    def has_extension(self, name: str) -> bool:
        return name in self.extensions

    def compute_capability_at_least(self, major: int) -> bool:
        """Whether an NVIDIA device is of compute capability `major`.0 or newer; False for a
        device that reports none."""
        head = self.compute_capability.split(".")[0]
        return head.isdigit() and int(head) >= major
