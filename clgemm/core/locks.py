"""Advisory file locks (through `filelock`), so that two clgemm processes never lose each
other's results.

The lock of a file is a sidecar `<file>.lock`: the file itself is replaced by rename on every
save, and a lock on a file that is renamed over protects nothing. Links are resolved first, so
two runs reaching one database through two symbolic links take turns on the one lock. The
operating system releases the lock when its holder dies, however it dies: a killed tuning run
never leaves a lock that blocks the next one.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import filelock

from clgemm.core.files import FileWriteError, real_path, reason


def lock_path(path: str | os.PathLike) -> Path:
    """The sidecar file locked for `path` (after its links are resolved)."""
    target = real_path(path)
    return target.with_name(target.name + ".lock")


def _lock(path: str | os.PathLike) -> filelock.BaseFileLock:
    sidecar = lock_path(path)
    if sidecar.is_dir():
        raise FileWriteError(f"cannot lock {path}: {sidecar} is a folder, not a lock file")
    return filelock.FileLock(str(sidecar), thread_local=False)


@contextmanager
def exclusive(path: str | os.PathLike) -> Iterator[None]:
    """Hold the exclusive lock of `path` (waiting for it) for the duration of the block."""
    lock = _lock(path)
    try:
        lock.acquire()
    except OSError as exc:
        raise FileWriteError(f"cannot lock {path} (through {lock_path(path)}): "
                             f"{reason(exc)}") from None
    try:
        yield
    finally:
        lock.release()


def try_hold(path: str | os.PathLike) -> filelock.BaseFileLock | None:
    """The exclusive lock of `path`, taken without waiting and held until `.release()`; None if
    another process (or another holder in this one) has it."""
    lock = _lock(path)
    try:
        lock.acquire(timeout=0)
    except filelock.Timeout:
        return None
    except OSError as exc:
        raise FileWriteError(f"cannot lock {path} (through {lock_path(path)}): "
                             f"{reason(exc)}") from None
    return lock
