"""The borrowed configurations that failed their trial launch on a device, kept so that the
lookup never offers them to it again.

`ladder`, `verify` and `bench` launch a configuration borrowed from another device once in a
child process before they run it (`tuner.first_launch`). One that crashes the runtime there, or
errs, would do the same in `gemm()`, whose own first-call trial runs in the caller's process: a
crash would take the caller along. So each failure is written to the results folder, one file
a device (`trials/<device key>.json`), and `lookup.candidates` leaves those configurations out.
A failure counts for the clgemm version that found it: another version's kernels are other
code. Reading the file only ever removes configurations, so nothing in it reaches a compiler;
a file that cannot be read is warned about once and ignored. Deleting it forgets them.
"""

from __future__ import annotations

import datetime as _dt
import json
import warnings
from pathlib import Path
from typing import Any, Mapping

from clgemm.configs import database
from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file, read_json_list, write_atomic
from clgemm.core.locks import exclusive
from clgemm.core.version import __version__
from clgemm.rungs import REGISTRY

FORMAT = "clgemm-trial-failures"

#: a configuration as the record names it: the kernel and its sorted parameters
Key = tuple[int, tuple[tuple[str, int], ...]]


def key_of(rung: int, params: Mapping[str, int]) -> Key:
    return int(rung), tuple(sorted((str(k), int(v)) for k, v in params.items()))


def record_path(device_key: str, root: Path | None = None) -> Path:
    return (root or database.results_dir()) / "trials" / f"{device_key}.json"


def _entry_key(entry: Any) -> Key | None:
    """The key of a well-formed entry of this clgemm version, else None."""
    if not isinstance(entry, dict) or entry.get("clgemm") != __version__:
        return None
    rung, params = entry.get("rung"), entry.get("params")
    if (type(rung) is not int or rung not in REGISTRY or not isinstance(params, dict)
            or not all(isinstance(k, str) and type(v) is int for k, v in params.items())):
        return None
    return key_of(rung, params)


_CACHE: dict[Path, tuple[tuple[int, int], dict[Key, str]]] = {}
_WARNED: set[Path] = set()


def _entries(path: Path) -> list[Any]:
    return read_json_list(path, "trial record", FORMAT, "entries", f"a {FORMAT} file")[1]


def failed(device_key: str, root: Path | None = None) -> dict[Key, str]:
    """The configurations recorded as failing on the device, each with why; read again only
    when the file changes."""
    path = record_path(device_key, root)
    try:
        stat = path.stat()
    except OSError:
        return {}
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    found: dict[Key, str] = {}
    try:
        if is_regular_file(path):
            for entry in _entries(path):
                key = _entry_key(entry)
                if key is not None:
                    found[key] = str(entry.get("why", ""))
    except (UsageError, OSError) as exc:  # a broken record must never break a lookup
        if path not in _WARNED:
            _WARNED.add(path)
            warnings.warn(f"clgemm: trial record {path} ignored ({exc})", RuntimeWarning,
                          stacklevel=2)
        found = {}
    _CACHE[path] = (stamp, found)
    return found


def record(device_key: str, failures: Mapping[Key, str], root: Path | None = None) -> None:
    """Add `failures` to the device's record, under its lock, keeping what another process
    wrote meanwhile; entries of other clgemm versions are dropped."""
    if not failures:
        return
    path = record_path(device_key, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    with exclusive(path):
        try:
            kept = [e for e in _entries(path) if _entry_key(e) is not None] \
                if is_regular_file(path) else []
        except (UsageError, OSError):
            kept = []  # unreadable: replaced by what is known now
        known = {_entry_key(e) for e in kept}
        date = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        kept += [{"rung": rung, "params": dict(params), "why": why, "clgemm": __version__,
                  "date": date} for (rung, params), why in failures.items()
                 if (rung, params) not in known]
        write_atomic(path, json.dumps({"format": FORMAT, "device": device_key,
                                       "entries": kept}, indent=1) + "\n", "trial record")
