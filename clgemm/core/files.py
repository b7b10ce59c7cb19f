"""Reading and writing the files clgemm keeps, so that no file can hang, crash or half-write a run.

Everything clgemm reads back (tuning databases, journals, device records, replays, parameter
files) may have been edited by hand, copied from elsewhere or replaced by something that is not
a file at all. Reading goes through `read_text`/`read_json`: regular files only (a FIFO named
`*.json` would block `open()` for ever), and any failure, nesting deep enough to exhaust
Python's recursion included, becomes one `UsageError` naming the file.

Everything clgemm writes (databases, journals' folders, --json and --csv outputs) goes through
`write_atomic`: a temporary file beside the target, flushed and fsync'd, then renamed over it.
A full disk or a refused write leaves the old file (or none) in place, never an empty or half
one, and is reported as one `FileWriteError` naming the file and the operating system's reason.
Symbolic links are followed first, so the link stays a link and the file it names is replaced.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from clgemm.core.errors import ClgemmError, UsageError


class FileWriteError(ClgemmError, OSError):
    """A file could not be written (disk full, no permission, not a file): the run's other
    results are kept, and the message names the file and why."""


def real_path(path: str | os.PathLike) -> Path:
    """`path` with every symbolic link resolved, so that a lock and a rename act on the file
    itself, whichever link it was reached through."""
    return Path(os.path.realpath(os.fspath(path)))


def is_regular_file(path: str | os.PathLike) -> bool:
    """True for a regular file (or a link to one); False for anything else, missing included."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def reason(exc: BaseException) -> str:
    """The operating system's words for an error, without Python's decoration."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def read_bytes(path: str | os.PathLike, what: str = "file") -> bytes:
    """The bytes of a regular file. Opened without blocking, so a FIFO or a device is refused
    by its type rather than waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read: {reason(exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            raise UsageError(f"{what} {path} cannot be read: it is {kind}")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read: {reason(exc)}") from None
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike, what: str = "file") -> str:
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


def parse_json(text: str | bytes, where: str) -> Any:
    """JSON from text, any failure (nesting too deep for the parser included) as a UsageError
    naming `where`."""
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError(f"{where} cannot be read: JSON nested too deeply") from None
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{where} cannot be read: not valid JSON ({exc})") from None


def read_json(path: str | os.PathLike, what: str = "file") -> Any:
    return parse_json(read_text(path, what), f"{what} {path}")


def read_json_list(path: str | os.PathLike, what: str, fmt: str, key: str,
                   kind: str) -> tuple[dict[str, Any], list[Any]]:
    """A JSON object of one "format" holding a list under `key`: the object and the list.
    Anything else is refused as a UsageError naming `what` and saying it is not `kind`."""
    data = read_json(path, what)
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise UsageError(f"{what} {path}: not {kind}")
    items = data.get(key)
    if not isinstance(items, list):
        raise UsageError(f"{what} {path}: '{key}' is not a list")
    return data, items


def json_files(folder: Path) -> list[Path]:
    """Every regular `*.json` file under `folder`, in name order: the results a folder holds,
    without hidden files (a write's temporary file) or what lies under a `journals` folder."""
    return sorted(p for p in folder.rglob("*.json") if "journals" not in p.relative_to(folder).parts
                  and not p.name.startswith(".") and is_regular_file(p))


def write_all(fd: int, data: bytes) -> None:
    """Every byte of `data` to an open descriptor (one write may take only part of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _mode_for(path: Path) -> int:
    """The mode the file has, or what a plain open() would give it under the umask (mkstemp's
    0600 would hide a shared database from the other users of a machine)."""
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def write_atomic(path: str | os.PathLike, text: str | bytes, what: str = "file") -> Path:
    """Replace the file at `path` (through any symbolic link) by `text` in one rename, making
    the folders it lacks. Returns the path written."""
    shown = Path(path)
    target = real_path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    tmp = None
    try:
        if target.is_symlink():  # a loop of links: there is no file to replace
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            os.fchmod(fd, _mode_for(target))
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise FileWriteError(f"cannot write {what} {shown}: {reason(exc)}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return target
