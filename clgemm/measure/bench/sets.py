"""How many input sets a shape rotates through, and whether a shape fits the device and the
host at all (refused by name before anything is allocated)."""

from __future__ import annotations

import gc
import math
from typing import Any

from clgemm.core.memory_fit import HOST_SHARE, INT_MAX, checking_bytes, host_available
from clgemm.core.problem import Problem

#: below this many bytes of A+B+C, inputs rotate among several sets (see the package docstring)
ROTATE_BYTES = 64 * 2**20
MAX_SETS = 128


def _bytes_text(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def device_bytes_per_set(p: Problem) -> int:
    """A, B, C, the transposed B of rungs 5-13 and the library's own C."""
    return 4 * (p.m * p.k + 2 * p.k * p.n + 2 * p.m * p.n)


def memory_problem(device: Any, p: Problem) -> str | None:
    """Why this shape cannot be benchmarked on this device and host, or None."""
    buffers = {"A": p.m * p.k, "B": p.k * p.n, "C": p.m * p.n}
    for name, count in buffers.items():
        if count > INT_MAX:
            return (f"{name} has {count} elements, more than the kernels' 32-bit indexing "
                    f"reaches ({INT_MAX})")
        if 4 * count > device.max_alloc_bytes:
            return (f"{name} needs {_bytes_text(4 * count)} in one buffer; the device allows "
                    f"{_bytes_text(device.max_alloc_bytes)} per allocation")
    need = device_bytes_per_set(p)
    if need > 0.9 * device.global_mem_bytes:
        return (f"needs {_bytes_text(need)} of device memory; the device has "
                f"{_bytes_text(device.global_mem_bytes)}")
    host = checking_bytes(p.m, p.n, p.k)
    avail = host_available()
    if avail is not None and host > HOST_SHARE * avail:
        return (f"checking it needs about {_bytes_text(host)} of host memory; "
                f"{_bytes_text(avail)} is available")
    return None


def input_sets(p: Problem, device: Any, rotate_bytes: int = ROTATE_BYTES) -> int:
    """How many input sets to rotate among: enough that between two uses of one set at least
    `rotate_bytes` of other A+B+C is read, within MAX_SETS and a quarter of device memory."""
    footprint = 4 * (p.m * p.k + p.k * p.n + p.m * p.n)
    if footprint >= rotate_bytes:
        return 1
    n = math.ceil(rotate_bytes / footprint) + 1
    fits = max(1, int(0.25 * device.global_mem_bytes // device_bytes_per_set(p)))
    return max(1, min(n, MAX_SETS, fits))


def _release_memory(backend: Any) -> None:
    gc.collect()
    backend.trim()
