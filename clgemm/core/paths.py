"""Where the project's data lives, and whether a file the user named can be written.

Two kinds of data, kept apart so that an installed wheel holds everything it needs and nothing
is ever written into it:

- package data, inside `clgemm/` and shipped with it: the kernel sources (`kernels/`) and the
  project's tuning databases (`tuning/`), read by every install;
- the checkout's own files beside the package: `results/` (ladder and bench runs, journals,
  plots, notes) and `ladder/` (the course), which only `clgemm report` and the tests read. A
  wheel installs a copy of the course's pages under its prefix (`share/clgemm/ladder`, setup.cfg's
  data_files), so that `clgemm explain` can name a page that exists; it has no `results/`.

A user's tuning goes to neither: `database.results_dir()` is $CLGEMM_RESULTS or the per-user
data folder.
"""

from __future__ import annotations

import errno
import os
import stat
import sysconfig
import tempfile
from pathlib import Path

from clgemm.core.errors import UsageError
from clgemm.core.files import FileWriteError, reason, write_all, write_atomic

#: the installed package
PACKAGE = Path(__file__).resolve().parents[1]
#: the kernel sources and the shipped tuning databases (package data)
KERNELS = PACKAGE / "kernels"
TUNING = PACKAGE / "tuning"
#: the same two folders as a checkout names them, for pages and messages
KERNELS_REL = "clgemm/kernels"
TUNING_REL = "clgemm/tuning"
#: the folder above the package: the checkout when clgemm runs from one (an editable install,
#: or PYTHONPATH), site-packages when installed from a wheel
ROOT = PACKAGE.parent
#: the checkout's committed results (read only, and only in a checkout)
RESULTS = ROOT / "results"
#: where an install puts the course's pages, under its data prefix (setup.cfg's data_files)
COURSE_DATA = Path("share") / "clgemm" / "ladder"


def checkout(what: str) -> Path:
    """The checkout clgemm runs from, for what only a checkout has (the course's pages and the
    committed results). An installed wheel has neither, so `what` (e.g. "clgemm report") is
    refused in one line rather than failing on the first missing file."""
    if not ((ROOT / "ladder").is_dir() and (ROOT / "results").is_dir()):
        raise UsageError(f"{what} needs a checkout of the clgemm repository (its ladder/ and "
                         f"results/), but clgemm runs from {PACKAGE}, an installed copy: run it "
                         f"in a clone after 'pip install -e .'")
    return ROOT


def course_folder() -> Path | None:
    """The course's pages as this clgemm can read them: the checkout's `ladder/`, else the copy
    an install put under its prefix (the environment's, or the user's for `pip install
    --user`); None where neither exists (the package copied on its own)."""
    candidates = [ROOT / "ladder"]
    for scheme in (sysconfig.get_default_scheme(), sysconfig.get_preferred_scheme("user")):
        try:
            candidates.append(Path(sysconfig.get_path("data", scheme)) / COURSE_DATA)
        except KeyError:  # a scheme this Python does not have
            continue
    return next((c for c in candidates if (c / "README.md").is_file()), None)


def _names_a_descriptor(path: str | os.PathLike) -> bool:
    """/dev/stdout, /dev/fd/N and the like name a file the process holds open already: it is
    written through, never replaced (a new file in its place would be one nobody reads)."""
    text = os.path.abspath(os.fspath(path))
    return text in ("/dev/stdout", "/dev/stderr") or text.startswith(("/dev/fd/",
                                                                       "/proc/self/fd/"))


def written_in_place(path: str | os.PathLike) -> bool:
    """Whether an output is written into what `path` names rather than replaced by a new file:
    a character device (a terminal, /dev/null), a FIFO, or a descriptor's name. Replacing a
    regular file by rename keeps a failed write from leaving half a file; these cannot be
    renamed over, and what reads them expects the bytes to arrive there."""
    if _names_a_descriptor(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _probe(folder: Path) -> str | None:
    """Why no file can be made in `folder` (None: one can). Permission bits do not tell:
    root passes every access check, yet /proc takes no new file, and a read-only mount refuses
    everyone; so a temporary file is made and removed."""
    try:
        fd, name = tempfile.mkstemp(prefix=".clgemm-probe-", dir=folder)
    except OSError as exc:
        return reason(exc)
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass
    return None


def check_writable(option: str, path: str | os.PathLike) -> Path:
    """Refuse, before any work starts, an output file that could not be written once the work
    is done: a folder, a file that is not writable, a place where no file can be created (the
    nearest existing folder above it is not writable, is a file, or takes no new file, as /proc
    does). A regular file is replaced through a temporary file beside it, so its folder must take
    one; a device, a FIFO or /dev/stdout is written where it is. The only file made here is
    a probe, removed at once; the writer makes the missing folders. `option` names the file in
    the message."""
    target = Path(path)
    shown = f"{option} {path}" if option else str(path)
    if target.is_dir():
        raise UsageError(f"{shown}: is a folder, not a file")
    if written_in_place(target):
        if target.exists() and not os.access(target, os.W_OK):
            raise UsageError(f"{shown}: the file is not writable")
        return target
    if target.exists():
        if not os.access(target, os.W_OK):
            raise UsageError(f"{shown}: the file is not writable")
        folder = target.absolute().parent
        why = _probe(folder)
        if why:
            raise UsageError(f"{shown}: cannot be replaced, the folder {folder} takes no new "
                             f"file ({why})")
        return target
    parent = target.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{shown}: cannot be created, {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{shown}: cannot be created, the folder {parent} is not writable")
    why = _probe(parent)
    if why:
        raise UsageError(f"{shown}: cannot be created in the folder {parent} ({why})")
    return target


def _write_in_place(path: str | os.PathLike, data: bytes, what: str) -> None:
    """Write into a device, a FIFO or an open descriptor's name. A FIFO is opened without
    waiting, so one that nobody reads is an error rather than a hang; the output is appended,
    so /dev/stdout redirected to a file keeps what the command printed before it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        why = "nothing reads from it" if exc.errno == errno.ENXIO else reason(exc)
        raise FileWriteError(f"cannot write {what} {path}: {why}") from None
    try:
        os.set_blocking(fd, True)
        write_all(fd, data)
    except OSError as exc:
        raise FileWriteError(f"cannot write {what} {path}: {reason(exc)}") from None
    finally:
        os.close(fd)


def write_output(path: str | os.PathLike, text: str, what: str = "file") -> None:
    """Write a file `check_writable` accepted: a regular file replaced whole in one rename (no
    empty or half-written file is ever left, whatever fails), a device or FIFO written into.
    A failure is one `FileWriteError` naming `what`, the file and the system's reason."""
    if written_in_place(path):
        _write_in_place(path, text.encode("utf-8"), what)
    else:
        write_atomic(path, text, what)
