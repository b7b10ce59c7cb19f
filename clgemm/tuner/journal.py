"""The tuning journal: one JSON object per line, written the moment each result is known.

A tuning run on a slow device can last hours and die at any point (a driver crash, a killed
job, a reboot). Appending each result as one `write` on an O_APPEND descriptor followed by fsync
means what is in the file survived; a kill in the middle of a write can leave at most one torn
last line, which reading drops (and resuming cuts off) so that the configuration is measured
again rather than lost. The first line is a header naming what the results are valid for; a
journal is only resumed for the same device, driver, backend, problem size and rungs, because
mixing measurements from two of them would let the tuner pick a winner on the wrong evidence.

An open journal holds the exclusive lock of its file (`locks.try_hold`), and a second run
opening it is refused. Appends alone would not need it (one write on O_APPEND lands whole at the
end, however many processes append), but resuming cuts a torn tail: a run resuming a journal
that another is still appending to would cut off the lines written between its read and its
cut. Two runs sharing one journal would also measure the same configurations twice.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import ClgemmError, UsageError
from ..files import FileWriteError, parse_json, read_bytes, reason
from ..locks import try_hold

FORMAT = "clgemm-tune-journal"
#: 2: the kernels that were rungs 9 and 10 became the library kernels 12 and 13 (the ladder's 9
#: and 10 are new kernels); a journal of version 1 is read with its rung numbers renumbered
VERSION = 2
RENUMBERED: dict[int, dict[int, int]] = {1: {9: 12, 10: 13}}

#: header fields a resumed run must match, in the order they are checked (the first mismatch is
#: the one named: a different driver also changes the device key, and "driver" says more)
MATCHED_FIELDS = ("backend", "driver", "device", "size", "rungs")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def default_journal_path(results: Path, device_key: str, rung: int, size: Iterable[int]) -> Path:
    m, n, k = size
    return results / "journals" / device_key / f"rung{rung}-{m}x{n}x{k}.jsonl"


def read_journal(path: Path) -> tuple[dict, list[dict], int]:
    """(header, records, bytes of complete lines). A torn or unreadable last line is dropped;
    an unreadable line elsewhere means the file is not a journal and is refused."""
    data = read_bytes(path, "journal")
    lines = data.split(b"\n")
    header: dict | None = None
    records: list[dict] = []
    good = 0
    for i, raw in enumerate(lines):
        complete = i < len(lines) - 1  # the part after the last newline is never complete
        if not raw.strip():
            good += len(raw) + 1 if complete else 0
            continue
        try:
            obj = parse_json(raw, f"{path}: line {i + 1}")
            if not isinstance(obj, dict):
                raise UsageError("not an object")
        except UsageError as exc:
            if "nested too deeply" in str(exc):
                raise
            if complete and any(x.strip() for x in lines[i + 1:]):
                raise UsageError(f"{path}: line {i + 1} is not JSON; "
                                 f"not a clgemm journal") from None
            break  # torn tail
        if not complete:
            break  # valid JSON but no newline yet: the write may have been cut; measure again
        if header is None:
            if obj.get("format") != FORMAT:
                raise UsageError(f"{path}: not a clgemm tuning journal (no '{FORMAT}' header)")
            header = obj
        else:
            records.append(obj)
        good += len(raw) + 1
    if header is None:
        raise UsageError(f"{path}: empty or not a clgemm tuning journal")
    header, records = renumber(header, records)
    return header, records, good


def renumber(header: dict, records: list[dict]) -> tuple[dict, list[dict]]:
    """A journal of an earlier VERSION with its rung numbers as they read today: in the header's
    `rungs` and its per-rung tables, and in every record's `rung`."""
    version = header.get("version", 1)
    if not isinstance(version, int) or version >= VERSION:
        return header, records

    def num(r: Any) -> Any:
        if not isinstance(r, int) or isinstance(r, bool):
            return r
        for v in range(version, VERSION):
            r = RENUMBERED.get(v, {}).get(r, r)
        return r

    def key(k: str) -> str:
        return str(num(int(k))) if isinstance(k, str) and k.isdigit() else k

    header = dict(header)
    if isinstance(header.get("rungs"), list):
        header["rungs"] = [num(r) for r in header["rungs"]]
    for name in ("params", "kernels", "strategies"):
        if isinstance(header.get(name), dict):
            header[name] = {key(k): v for k, v in header[name].items()}
    return header, [{**r, "rung": num(r["rung"])} if "rung" in r else r for r in records]


def check_journal(path: Path, header: Mapping[str, Any],
                  resume: bool) -> tuple[dict, list[dict], int] | None:
    """What `Journal.open` would refuse, refused without touching the file: an existing journal
    without `resume`, or one whose header differs from `header` (the first differing field of
    MATCHED_FIELDS is named). Returns the journal's contents when there is one to resume."""
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return None
    if not resume:
        raise UsageError(f"journal {path} already exists: add --resume to continue it, "
                         f"or give --journal FILE to start another")
    old, records, good = read_journal(path)
    for name in MATCHED_FIELDS:
        if _norm(old.get(name)) != _norm(header.get(name)):
            raise UsageError(f"cannot resume {path}: its {name} is {_show(name, old.get(name))}, "
                             f"this run's is {_show(name, header.get(name))}")
    return old, records, good


@dataclass
class Journal:
    path: Path
    header: dict
    records: list[dict] = field(default_factory=list)
    _fd: int | None = None
    _lock: Any = None

    @classmethod
    def open(cls, path: Path, header: Mapping[str, Any], resume: bool,
             command: str = "") -> "Journal":
        """Create a new journal, or (with `resume`) continue an existing one whose header
        matches `header` on every field of MATCHED_FIELDS."""
        path = Path(path)
        header = {"format": FORMAT, "version": VERSION, **header}
        path.parent.mkdir(parents=True, exist_ok=True)
        lock, fd = _open_locked(path)
        try:
            journal = cls._start(path, fd, header, resume, command)
        except BaseException:
            os.close(fd)
            lock.release()
            raise
        journal._lock = lock
        return journal

    @classmethod
    def _start(cls, path: Path, fd: int, header: dict, resume: bool,
               command: str) -> "Journal":
        existing = check_journal(path, header, resume)
        if existing is None:
            journal = cls(path, dict(header), [], fd)
            journal._write(header)
            _fsync_dir(path.parent)
            return journal
        old, records, good = existing
        if good < os.fstat(fd).st_size:  # cut the torn tail before appending
            os.ftruncate(fd, good)
            os.fsync(fd)
        journal = cls(path, old, records, fd)
        journal.append({"kind": "resume", "time": now(), "command": command,
                        "clgemm": header.get("clgemm")}, keep=False)
        return journal

    def _write(self, obj: Mapping[str, Any]) -> None:
        line = (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode()
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        written = os.write(self._fd, line)  # one write on O_APPEND: lands whole, at the end
        if written != len(line):  # a full disk: cut the part line, or the next would follow it
            os.ftruncate(self._fd, size)
            raise ClgemmError(f"journal {self.path}: only {written} of {len(line)} bytes of a "
                              f"record could be written (disk full?)")
        os.fsync(self._fd)

    def append(self, record: Mapping[str, Any], keep: bool = True) -> None:
        self._write(_finite(record))
        if keep:
            self.records.append(dict(record))

    def results(self, rung: int | None = None, kind: str = "search") -> list[dict]:
        """Measurement records (those with a config), optionally of one rung and one kind."""
        return [r for r in self.records if "config" in r and r.get("kind", "search") == kind
                and (rung is None or r.get("rung") == rung)]

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _open_locked(path: Path) -> tuple[Any, int]:
    """The journal's lock and its append descriptor."""
    lock = try_hold(path)
    if lock is None:
        raise UsageError(f"journal {path} is in use by another clgemm tune; wait for it to "
                         f"finish, or give --journal FILE to start another")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        lock.release()
        raise FileWriteError(f"cannot write journal {path}: {reason(exc)}") from None
    return lock, fd


def _finite(obj: Any) -> Any:
    """NaN and inf become null: JSON has neither, and a relative error of inf (NaN output) is
    already said by the status."""
    if isinstance(obj, float):
        return obj if obj == obj and abs(obj) != float("inf") else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def _norm(value: Any) -> Any:
    return json.loads(json.dumps(value)) if value is not None else None


def _show(name: str, value: Any) -> str:
    if name == "size" and isinstance(value, list):
        return "x".join(str(v) for v in value)
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return repr(value)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
