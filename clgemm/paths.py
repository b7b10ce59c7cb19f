"""Where the project's data lives, and whether a file the user named can be written.

Two kinds of data, kept apart so that an installed wheel holds everything it needs and nothing
is ever written into it:

- package data, inside `clgemm/` and shipped with it: the kernel sources (`kernels/`) and the
  project's tuning databases (`tuning/`), read by every install;
- the checkout's own files beside the package: `results/` (ladder and bench runs, journals,
  plots, notes) and `ladder/` (the course), which only `clgemm report` and the tests read, and
  which an installed wheel does not have.

A user's tuning goes to neither: `database.results_dir()` is $CLGEMM_RESULTS or the per-user
data folder.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError

#: the installed package
PACKAGE = Path(__file__).resolve().parent
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


def checkout(what: str) -> Path:
    """The checkout clgemm runs from, for what only a checkout has (the course's pages and the
    committed results). An installed wheel has neither, so `what` (e.g. "clgemm report") is
    refused in one line rather than failing on the first missing file."""
    if not ((ROOT / "ladder").is_dir() and (ROOT / "results").is_dir()):
        raise UsageError(f"{what} needs a checkout of the clgemm repository (its ladder/ and "
                         f"results/), but clgemm runs from {PACKAGE}, an installed copy: run it "
                         f"in a clone after 'pip install -e .'")
    return ROOT


def check_writable(option: str, path: str | os.PathLike) -> Path:
    """Refuse, before any work starts, an output file that could not be written once the work
    is done: a folder, a file that is not writable, or a place where it cannot be created (the
    nearest existing folder above it is not writable, or is a file). Nothing is created here;
    the writer makes the missing folders. `option` names the file in the message."""
    target = Path(path)
    shown = f"{option} {path}" if option else str(path)
    if target.is_dir():
        raise UsageError(f"{shown}: is a folder, not a file")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise UsageError(f"{shown}: the file is not writable")
        return target
    parent = target.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise UsageError(f"{shown}: cannot be created, {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{shown}: cannot be created, the folder {parent} is not writable")
    return target


def write_output(path: str | os.PathLike, text: str) -> None:
    """Write a file `check_writable` accepted, making the folders it may lack."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
