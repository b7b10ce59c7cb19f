"""Where the project's data lives (the kernel sources and the committed results), and whether a
file the user named can be written."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "kernels"
RESULTS = ROOT / "results"


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
