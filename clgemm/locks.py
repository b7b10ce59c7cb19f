"""Advisory file locks, so that two clgemm processes never lose each other's results.

`flock` locks belong to an open file, so they are released when the process dies, however it
dies: a killed tuning run never leaves a lock that blocks the next one. Windows has no fcntl;
there the locks do nothing and concurrent runs on one file are as unsafe as they were before
locking (the rest of clgemm still works there).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, see above
    fcntl = None


def lock_path(path: Path) -> Path:
    """The sidecar file locked for `path`: the file itself is replaced by rename on every
    save, and a lock on a file that is renamed over protects nothing."""
    path = Path(path)
    return path.with_name(path.name + ".lock")


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of `path` (waiting for it) for the duration of the block."""
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def try_exclusive(fd: int) -> bool:
    """Take the exclusive lock of an open file without waiting; False if another open file
    holds it. The lock lasts until `fd` is closed."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
