"""Every environment variable clgemm reads, each through one accessor here.

A setting read in one place is parsed one way: an empty value means unset everywhere (as
`VAR= clgemm ...` is the shell's way of clearing it for one command), and a value that names
nothing is refused with one error naming the variable, rather than read as something else by
one module and ignored by another.

=====================  ===============  ==========================================================
variable               accessor         meaning
=====================  ===============  ==========================================================
CLGEMM_DEVICE          device           the device used where a command or a call names none (an
                                        index or a part of a name, as --device takes)
CLGEMM_RESULTS         results          the folder results and the user's tuning go to (default:
                                        the per-user data folder)
CLGEMM_SHIPPED_TUNING  shipped_tuning   0, no, false or off: leave the tuning databases shipped in
                                        the package unread; 1, yes, true or on (the default):
                                        read them
CLGEMM_CLBLAST_LIB     clblast_library  the CLBlast library file tried before the usual names
LD_LIBRARY_PATH        library_path     folders searched first for NVIDIA's OpenCL library
CUPY_TF32              cupy_tf32        set, and not 0: cuBLAS would round through TF32, so the
                                        call bench refuses to run
NO_COLOR               no_color         set, and not empty: no colour in the command line's output
XDG_DATA_HOME          (none)           where the per-user data folder is: platformdirs reads it
CLGEMM_BACKENDS        backend_modules  Python modules of more backends, comma-separated, each a
                                        backend package registered when clgemm starts (a
                                        tune's measuring processes see them too)
COLUMNS                (none)           the width tables are fitted to: Python's
                                        `shutil.get_terminal_size` reads it
CLGEMM_VENV            (none)           the virtual environment `./run` uses: only the `run`
                                        script reads it
CUDA_VISIBLE_DEVICES   cuda_visible     the GPUs CUDA shows a process: a cluster tune's records
                                        name it beside a CUDA device's ordinal
=====================  ===============  ==========================================================
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from clgemm.core.errors import UsageError

DEVICE = "CLGEMM_DEVICE"
RESULTS = "CLGEMM_RESULTS"
SHIPPED_TUNING = "CLGEMM_SHIPPED_TUNING"
CLBLAST_LIB = "CLGEMM_CLBLAST_LIB"
LIBRARY_PATH = "LD_LIBRARY_PATH"
CUPY_TF32 = "CUPY_TF32"
NO_COLOR = "NO_COLOR"
XDG_DATA_HOME = "XDG_DATA_HOME"
BACKENDS = "CLGEMM_BACKENDS"
CUDA_VISIBLE = "CUDA_VISIBLE_DEVICES"

_OFF = ("0", "no", "false", "off")
_ON = ("1", "yes", "true", "on")


def _raw(name: str) -> str:
    """The variable's value as set, "" where it is not."""
    return os.environ.get(name, "")


def _value(name: str, what: str) -> str | None:
    """The value, None where empty or unset; a value of blanks alone names nothing, and is
    refused rather than taken as a name made of spaces."""
    value = _raw(name)
    if not value:
        return None
    if not value.strip():
        raise UsageError(f"{name}={value!r}: blanks name no {what}; unset it, or give one")
    return value


def device() -> str | None:
    """$CLGEMM_DEVICE: the device (an index or a name part) used wherever none is named, as
    pyopencl users set PYOPENCL_CTX; None where unset or empty."""
    value = _raw(DEVICE)
    if not value:
        return None
    if not value.strip():
        raise UsageError(f"{DEVICE}={value!r}: blanks name no device; unset it, or give an "
                         f"index or a part of a name (see 'clgemm devices')")
    return value


def results() -> Path | None:
    """$CLGEMM_RESULTS: the folder results are written to; None where unset or empty (the
    per-user data folder then)."""
    value = _value(RESULTS, "folder")
    return None if value is None else Path(value)


def shipped_tuning() -> bool:
    """$CLGEMM_SHIPPED_TUNING: whether the databases shipped in the package are read (yes
    unless it says 0, no, false or off)."""
    value = _raw(SHIPPED_TUNING)
    word = value.strip().lower()
    if not value or word in _ON:
        return True
    if word in _OFF:
        return False
    raise UsageError(f"{SHIPPED_TUNING}={value!r}: give 0 to leave the shipped tuning databases "
                     f"unread, or 1 (the default) to read them")


def clblast_library() -> str | None:
    """$CLGEMM_CLBLAST_LIB: the CLBlast library file tried first; None where unset or empty."""
    return _value(CLBLAST_LIB, "library")


def library_path() -> list[str]:
    """$LD_LIBRARY_PATH's folders, in order (empty parts, which the loader reads as the current
    folder, are not searched for a driver library)."""
    return [d for d in _raw(LIBRARY_PATH).split(os.pathsep) if d]


def cupy_tf32() -> bool:
    """Whether $CUPY_TF32 turns on CuPy's TF32 matmuls: set to anything but 0, as CuPy reads
    it."""
    return _raw(CUPY_TF32) not in ("", "0")


def no_color() -> bool:
    """Whether $NO_COLOR asks for no colour: present and not empty (no-color.org)."""
    return bool(_raw(NO_COLOR))


def backend_modules() -> list[str]:
    """$CLGEMM_BACKENDS: the modules of more backends to register, each a dotted Python name;
    a name that is not one is refused, naming the variable."""
    value = _value(BACKENDS, "module")
    if value is None:
        return []
    names = [part.strip() for part in value.split(",")]
    for name in names:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", name):
            raise UsageError(f"{BACKENDS}={value!r}: {name!r} is not a Python module name")
    return names


def cuda_visible() -> str | None:
    """$CUDA_VISIBLE_DEVICES as set (CUDA reads it; clgemm only reports it), None where unset or
    empty."""
    return _raw(CUDA_VISIBLE) or None
