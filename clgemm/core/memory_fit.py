"""Whether a problem's buffers fit the device and the host, decided before anything is allocated.

A buffer that does not fit ends in a runtime's own error (or NumPy's) in the middle of a run, long
after the user's mistake; checking the sizes first turns it into one line naming them. `gemm`
and the commands that run the rungs (ladder, tune, verify's replays) share these checks, so the
limits and the wording stay the same everywhere. Nothing here imports the rest of the package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from clgemm.core.errors import UsageError

#: the kernels index with 32-bit ints: sizes, offsets and leading dimensions stay below this
INT_MAX = 2**31 - 1
#: share of the host's available memory a run may plan to use (the rest is for everyone else)
HOST_SHARE = 0.8


def size_text(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**26 else f"{nbytes / 2**20:.2f} MiB"


def check_memory(device: Any, buffers: Sequence[tuple[str, int]],
                 what: str = "this product") -> None:
    """Refuse, by name and size, buffers (name, floats) the device cannot hold: one larger than
    its largest allocation, or all together more than its memory."""
    for name, count in buffers:
        if 4 * count > device.max_alloc_bytes:
            raise UsageError(f"{name} needs {size_text(4 * count)} ({count} floats) in one "
                             f"buffer; device '{device.name}' allows at most "
                             f"{size_text(device.max_alloc_bytes)} per allocation")
    total = 4 * sum(count for _, count in buffers)
    if total > device.global_mem_bytes:
        parts = ", ".join(f"{name} {size_text(4 * count)}" for name, count in buffers)
        raise UsageError(f"{what} needs {size_text(total)} of device memory ({parts}); device "
                         f"'{device.name}' has {size_text(device.global_mem_bytes)}")


def check_indexing(buffers: Sequence[tuple[str, int]]) -> None:
    """Refuse a buffer with more elements than the kernels' 32-bit indexes reach: the kernels
    would read and write wrong places rather than fail."""
    for name, count in buffers:
        if count > INT_MAX:
            raise UsageError(f"{name} has {count} elements, more than the kernels' 32-bit "
                             f"indexing reaches ({INT_MAX})")


def host_available() -> int | None:
    """Bytes of host memory available now (Linux's estimate), or None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def checking_bytes(m: int, n: int, k: int) -> int:
    """Host memory to make and check one M x N x K product: A and B in float32 and as float64
    copies, the float64 reference, and the result with the temporaries of comparing it."""
    return 12 * (m * k + k * n) + 32 * m * n


def check_host_memory(what: str, nbytes: int) -> None:
    """Refuse host work that would take more than its share of the available memory, where
    NumPy would fail half-way or the system would start killing processes."""
    avail = host_available()
    if avail is not None and nbytes > HOST_SHARE * avail:
        raise UsageError(f"{what} needs about {size_text(nbytes)} of host memory; "
                         f"{size_text(avail)} is available")
