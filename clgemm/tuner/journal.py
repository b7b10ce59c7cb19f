"""The tuning journal: one JSON object per line, written the moment each result is known.

A tuning run on a slow device can last hours and die at any point (a driver crash, a killed
job, a reboot). Appending each result as one `write` on an O_APPEND descriptor followed by fsync
means what is in the file survived; a kill in the middle of a write can leave at most one torn
last line, which reading drops (and reopening cuts off) so that the configuration is measured
again rather than lost. The first line is a header naming what the results are valid for.

A journal is a cache of measurements, as Kernel Tuner's cache file is: a run that finds the
journal of its device, driver, backend, problem size and rungs reuses every measurement in it
and appends its own, so running the same tune twice measures nothing twice and an interrupted
run simply goes on. A journal made for anything else is refused by the first field that differs,
because mixing measurements from two of them would let the tuner pick a winner on the wrong
evidence. Starting over (`fresh`) never loses a journal: the old one is renamed aside
(`<name>.old1`, `.old2`, ...) and stays readable.

An open journal holds the exclusive lock of its file (`locks.try_hold`), and a second run
opening it is refused. Appends alone would not need it (one write on O_APPEND lands whole at the
end, however many processes append), but reopening cuts a torn tail: a run reopening a journal
that another is still appending to would cut off the lines written between its read and its
cut. Two runs sharing one journal would also measure the same configurations twice.

A journal that could not be started (a full disk refusing its header, a run that failed before
its first measurement) is removed again, so that nothing half-made stands in the next run's way.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from clgemm.configs.database import RENUMBERED
from clgemm.core.errors import UsageError
from clgemm.core.files import FileWriteError, is_regular_file, parse_json, read_bytes, reason
from clgemm.core.locks import try_hold

FORMAT = "clgemm-tune-journal"
#: 2: the kernels that were rungs 9 and 10 became the library kernels 12 and 13 (the ladder's 9
#: and 10 are new kernels); a journal of version 1 is read with its rung numbers renumbered
VERSION = 2

#: header fields a resumed run must match, in the order they are checked (the first mismatch is
#: the one named: a different driver also changes the device key, and "driver" says more)
MATCHED_FIELDS = ("backend", "driver", "device", "size", "batch", "rungs")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def default_journal_path(results: Path, device_key: str, rung: int, size: Iterable[int]) -> Path:
    """Where a tune of one rung at one shape ([M, N, K], or [BATCH, M, N, K] for a stack)
    keeps its journal."""
    return results / "journals" / device_key / f"rung{rung}-{'x'.join(map(str, size))}.jsonl"


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
            obj = parse_json(raw, f"journal {path}: line {i + 1}")
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
    version = header.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version > VERSION:
        raise UsageError(f"journal {path} is of format version {version!r}; this clgemm reads "
                         f"versions up to {VERSION} (a newer clgemm wrote it)")
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


#: the command's option for each setting of a tune whose option is not its keyword in
#: `clgemm.tune()` written as '--key-name'
_OPTIONS = {"seconds": "--time", "heuristics": "--no-heuristics"}


@dataclass(frozen=True)
class Wording:
    """How a message names the caller's choices: the command's options, or the keywords of
    `clgemm.tune()`, so that a Python program is never told to add a command-line flag. The
    settings of a tune are named by their keywords (`tuner.settings.TuneSettings`' fields)."""

    #: True: the command's options ("--time 5"); False: the function's keywords ("seconds=5")
    options: bool = False

    def name(self, key: str) -> str:
        """A setting's name as the caller writes it: '--time' or 'seconds'."""
        if not self.options:
            return key
        return _OPTIONS.get(key, "--" + key.replace("_", "-"))

    def given(self, key: str, value: Any) -> str:
        """A setting with its value as the caller wrote them: "--time 5", "--strategy 'x'",
        or "seconds=5", "strategy='x'"."""
        if not self.options:
            return f"{key}={value!r}"
        if isinstance(value, str):
            return f"{self.name(key)} '{value}'"
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return f"{self.name(key)} {value:g}"
        return f"{self.name(key)} {value}"

    def flag(self, key: str) -> str:
        """A switch turned on as the caller turns it on: '--fresh' or 'fresh=True'."""
        return self.name(key) if self.options else f"{key}=True"

    @property
    def fresh(self) -> str:
        """How to start a journal over, moving the old one aside."""
        return self.flag("fresh")

    @property
    def other(self) -> str | None:
        """How to use another journal file, or None where the caller cannot choose one."""
        return f"{self.name('journal')} FILE" if self.options else None


COMMAND = Wording(options=True)
PYTHON = Wording()


def aside_path(path: Path) -> Path:
    """Where `fresh` moves an existing journal: the first free `<name>.oldN`. The name no
    longer ends in `.jsonl`, so the scans of the results folder do not count it twice."""
    n = 1
    while True:
        candidate = path.with_name(f"{path.name}.old{n}")
        if not os.path.lexists(candidate):
            return candidate
        n += 1


#: how long taking a journal's lock keeps trying: another run's check (`refuse_in_use`) holds it
#: for an instant, a run that has the journal open holds it until it ends
LOCK_PATIENCE_S = 0.5


def _hold(path: Path) -> Any:
    """The journal's lock, or None if another run holds it for longer than a check would."""
    deadline = time.monotonic() + LOCK_PATIENCE_S
    while True:
        lock = try_hold(path)
        if lock is not None or time.monotonic() >= deadline:
            return lock
        time.sleep(0.02)


def _held_elsewhere(path: Path, wording: Wording) -> UsageError:
    other = f", or give {wording.other} to start another" if wording.other else ""
    return UsageError(f"journal {path} is in use by another clgemm tune; wait for it to "
                      f"finish{other}")


def refuse_in_use(path: Path, wording: Wording = PYTHON) -> None:
    """Refuse now, before anything is measured, a journal that another run has open (its lock
    is taken and released at once; `Journal.open` takes it for good)."""
    path = Path(path)
    if not path.exists():
        return
    lock = _hold(path)
    if lock is None:
        raise _held_elsewhere(path, wording)
    lock.release()


def check_journal(path: Path, header: Mapping[str, Any], resume: bool = True,
                  fresh: bool = False,
                  wording: Wording = PYTHON) -> tuple[dict, list[dict], int] | None:
    """What `Journal.open` would refuse, refused without touching the file: something that is
    not a regular file, or a journal whose header differs from `header` (the first differing
    field of MATCHED_FIELDS is named). Returns the journal's contents when there is one to
    reuse; None when there is none, or when `fresh` will move it aside. `resume` is accepted
    for callers of the time when an existing journal had to be asked for: it changes nothing."""
    path = Path(path)
    if not os.path.lexists(path):
        return None
    if not is_regular_file(path):
        raise UsageError(f"journal {path} is not a regular file")
    if fresh or path.stat().st_size == 0:
        return None
    try:
        old, records, good = read_journal(path)
    except UsageError as exc:
        raise UsageError(f"{exc}; {wording.fresh} moves it aside and starts a new "
                         f"journal") from None
    for name in MATCHED_FIELDS:
        if _norm(old.get(name)) != _norm(header.get(name)):
            other = f", or {wording.other} uses another" if wording.other else ""
            raise UsageError(f"journal {path} cannot be reused: its {name} is "
                             f"{_show(name, old.get(name))}, this run's is "
                             f"{_show(name, header.get(name))}; {wording.fresh} moves it aside "
                             f"and starts a new one{other}")
    return old, records, good


@dataclass
class Journal:
    path: Path
    header: dict
    records: list[dict] = field(default_factory=list)
    _fd: int | None = None
    _lock: Any = None
    #: where `fresh` moved the journal that was there, if it did
    moved_to: Path | None = None
    #: whether this open created the journal (only such a journal is ever removed again)
    _created: bool = False

    @classmethod
    def open(cls, path: Path, header: Mapping[str, Any], fresh: bool = False,
             command: str = "", wording: Wording = PYTHON) -> "Journal":
        """Continue the journal at `path` if there is one and its header matches `header` on
        every field of MATCHED_FIELDS, else start it; with `fresh`, move an existing one aside
        first and start a new one."""
        path = Path(path)
        header = {"format": FORMAT, "version": VERSION, **header}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FileWriteError(f"cannot write journal {path}: {reason(exc)}") from None
        lock = _hold(path)
        if lock is None:
            raise _held_elsewhere(path, wording)
        try:
            return cls._start(path, lock, header, fresh, command, wording)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _start(cls, path: Path, lock: Any, header: dict, fresh: bool, command: str,
               wording: Wording) -> "Journal":
        moved_to = None
        if fresh:
            check_journal(path, header, fresh=True)  # what is there must be a file to move
            if os.path.lexists(path) and path.stat().st_size > 0:
                moved_to = aside_path(path)
                try:
                    os.rename(path, moved_to)
                except OSError as exc:
                    raise FileWriteError(f"cannot move journal {path} aside to {moved_to}: "
                                         f"{reason(exc)}") from None
        existing = check_journal(path, header, wording=wording)
        created = not os.path.lexists(path)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise FileWriteError(f"cannot write journal {path}: {reason(exc)}") from None
        if existing is None:
            journal = cls(path, dict(header), [], fd, lock, moved_to, True)
            try:
                journal._write(header)
            except BaseException:
                # Nothing of a journal whose header did not get written is worth keeping
                # (the file was absent or empty): an empty one would only confuse the next run.
                journal._fd = None
                os.close(fd)
                _remove(path)
                raise
            _fsync_dir(path.parent)
            return journal
        old, records, good = existing
        journal = cls(path, old, records, fd, lock, moved_to, created)
        try:
            try:
                if good < os.fstat(fd).st_size:  # cut the torn tail before appending
                    os.ftruncate(fd, good)
                    os.fsync(fd)
            except OSError as exc:
                raise FileWriteError(f"cannot write journal {path}: {reason(exc)}") from None
            journal.append({"kind": "resume", "time": now(), "command": command,
                            "clgemm": header.get("clgemm")}, keep=False)
        except BaseException:
            journal._fd = None
            os.close(fd)
            raise
        return journal

    @property
    def measurements(self) -> int:
        """How many measurements (records with a configuration) the journal holds."""
        return sum(1 for r in self.records if "config" in r)

    def _write(self, obj: Mapping[str, Any]) -> None:
        line = (json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n").encode()
        assert self._fd is not None
        try:
            size = os.fstat(self._fd).st_size
            written = os.write(self._fd, line)  # one write on O_APPEND: lands whole, at the end
            if written != len(line):  # a full disk: cut the part line, or the next would follow it
                os.ftruncate(self._fd, size)
                raise FileWriteError(f"cannot write journal {self.path}: only {written} of "
                                     f"{len(line)} bytes of a record could be written "
                                     f"(disk full?)")
            os.fsync(self._fd)
        except FileWriteError:
            raise
        except OSError as exc:
            raise FileWriteError(f"cannot write journal {self.path}: {reason(exc)}") from None

    def append(self, record: Mapping[str, Any], keep: bool = True) -> None:
        self._write(_finite(record))
        if keep:
            self.records.append(dict(record))

    def results(self, rung: int | None = None, kind: str = "search") -> list[dict]:
        """Measurement records (those with a config), optionally of one rung and one kind."""
        return [r for r in self.records if "config" in r and r.get("kind", "search") == kind
                and (rung is None or r.get("rung") == rung)]

    def close(self, failed: bool = False) -> None:
        """Close the journal and release its lock. `failed`: the run ended on an error; a
        journal it created that holds no measurement is removed, so that the next run starts
        as if this one had never begun."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            if failed and self._created and not self.records:
                _remove(self.path)
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        self.close(failed=exc_type is not None)


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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
