"""The kernel sources as a backend compiles them, read from disk once per process.

A build is cached by its backend, but the library path asks for its kernels on every call; reading
and joining the files each time cost more than the launches of a small product.
"""

from __future__ import annotations

from functools import lru_cache

from clgemm.core.paths import KERNELS

COMMON = "common.h"


@lru_cache(maxsize=None)
def kernel_file(filename: str) -> str:
    """The text of one file of `clgemm/kernels/`."""
    return (KERNELS / filename).read_text()


def kernel_source(header: str, filename: str) -> str:
    """What a backend compiles: its header, the shared definitions, then the kernel file."""
    parts = [header, kernel_file(COMMON), kernel_file(filename)]
    return "\n".join(p for p in parts if p)
