"""Memory for the new C of repeated calls on NumPy arrays, lent out and taken back once no array
uses it any more.

A new C of a few MiB costs its first writer a page fault per page, and a CPU device's kernel is
that writer: its threads stall on faults that a C given to the call does not cost
(results/xeon/stacks-16core/fresh-c-xeon.txt). NumPy hands a large array's memory back to the
system when the array dies and takes fresh pages for the next, so a loop of calls pays the
faults every time. Here a block of memory, once touched, is kept for the next call of its size.

A lent block is the base of the C returned, and every NumPy array made from C (its views,
reshapes and transposes included) holds a reference to that base. So a block is free exactly
when the pool holds the only reference to it: CPython's reference count says so without any
hook on the caller's arrays.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

#: blocks below this size are left to NumPy: their pages are few, and its allocator reuses them
MIN_BYTES = 1 << 20
#: blocks above this size are left to NumPy: their product runs long enough that its faults are
#: a small share of the call
MAX_BYTES = 64 << 20
#: what the pool keeps in all, and per size (a loop that rebinds its result holds the last C
#: while the next call makes its own, so two of a size are in use at once)
KEPT_BYTES = 128 << 20
PER_SIZE = 3
#: a block starts on a page of its own
PAGE_FLOATS = 4096 // 4


class HostPool:
    def __init__(self) -> None:
        #: per size, each block as (the array that owns its memory, where its page starts)
        self._blocks: dict[int, list[tuple[np.ndarray, int]]] = {}
        self._kept = 0
        self._lock = threading.Lock()
        #: the references to a block's owner that only the pool holds: its place in the tuple,
        #: and the argument of the count itself
        probe = [(np.empty(1, np.float32), 0)]
        self._free_refs = sys.getrefcount(probe[0][0])

    def empty(self, shape: tuple[int, int]) -> np.ndarray:
        """A C-ordered float32 array of `shape`, in a block kept from an earlier call where one
        of its size is free, else in a new block the pool keeps if it has room for it."""
        count = shape[0] * shape[1]
        if not MIN_BYTES <= 4 * count <= MAX_BYTES:
            return np.empty(shape, dtype=np.float32)
        with self._lock:
            blocks = self._blocks.setdefault(count, [])
            for i in range(len(blocks)):
                if sys.getrefcount(blocks[i][0]) == self._free_refs:
                    return _lent(blocks[i], count, shape)
            if len(blocks) >= PER_SIZE or self._kept + 4 * count > KEPT_BYTES:
                return np.empty(shape, dtype=np.float32)
            owner = np.empty(count + PAGE_FLOATS, dtype=np.float32)
            block = (owner, (-owner.ctypes.data % 4096) // 4)
            blocks.append(block)
            self._kept += 4 * count
        return _lent(block, count, shape)

    def clear(self) -> None:
        """Let the blocks go (those still lent stay with their arrays)."""
        with self._lock:
            self._blocks.clear()
            self._kept = 0


def _lent(block: tuple[np.ndarray, int], count: int, shape: tuple[int, int]) -> np.ndarray:
    """The block's floats from the start of its page, as an array of `shape`: a view whose
    base is the block's owner (NumPy points every view at the array that owns the memory)."""
    owner, skip = block
    return owner[skip:skip + count].reshape(shape)


HOST_POOL = HostPool()
