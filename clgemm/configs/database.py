"""The tuning database: the best verified configuration per device, backend, rung and shape.

One JSON file per device key (`<results>/<device-key>.json`; the project's own are shipped in
`clgemm/tuning/`). The key already names backend,
vendor, device and driver, so a file can never be applied to another device or driver; a file
whose recorded key differs from its reader's device (copied or renamed by hand) is refused by
name rather than trusted. Only results that passed the float64 check are stored ("verified"):
a fast wrong kernel must never become a default. Each entry keeps its provenance (when, by
which command and versions, with how many repeats and what spread), because a tuned number is
only as good as the conditions it was measured in.

Writes go to a temporary file in the same directory, are fsync'd and then renamed over the old
file (`os.replace` is atomic on POSIX and Windows), so a reader sees the old database or the new
one, never half of one. `save` merges with what is on disk under an exclusive lock on a sidecar
file (`<database>.lock`, left in place), so two tuning runs writing the same file do not drop
each other's entries: without the lock both could read the same old file and the second rename
would discard what the first added.

An entry that cannot be used (a shape of zero, a speed that is not a number, a parameter that
is not an integer: a file edited by hand or by another tool) is skipped for every use and named
in one warning per file, but kept in the file by every save: a tuning run must not silently
delete what someone may still want to repair. `record` refuses such an entry outright. An entry
that is well formed but that its rung cannot run (a parameter the rung no longer has, a value
below its minimum, beyond the device or beyond a kernel's int) is never used either; a verified
measurement of its slot replaces it, however fast it claims to be, and says so, since otherwise
one such entry would keep every later tune of that slot out of the database.

An entry may be measured on a stack: `batch` products of its shape in one batched launch. Its
slot is not the single product's of that shape (`Entry.slot`), so neither displaces the other,
and a file without stacks is written exactly as before (the key is left out at 1).

Two folders are read (`read_roots`): the one results are written to (`results_dir`) and the
databases shipped in the package, the latter unless $CLGEMM_SHIPPED_TUNING is 0. Where results
go and what is read are kept apart, so that pointing results elsewhere never hides the project's
tuning from a run.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import platformdirs

from clgemm.core import settings
from clgemm.core.errors import UsageError
from clgemm.core.files import (FileWriteError, parse_json, read_json, real_path, reason,
                               write_atomic)
from clgemm.core.locks import exclusive
from clgemm.core.memory_fit import INT_MAX
from clgemm.core.paths import TUNING
from clgemm.core.validation import is_finite, is_int, params_problem
from clgemm.rungs import Rung, get_rung
from clgemm.rungs.tiled import TILED, reads_b_itself

FORMAT = "clgemm-tuning-database"
#: 2: the ladder's rungs 9 and 10 became one idea each (prefetching, any size); the kernels that
#: were rungs 9 and 10 are now the library kernels 12 ("tiled") and 13 ("tiled-any")
VERSION = 2
#: how the rung numbers of a file older than version 2 read today, per version: an entry of
#: version 1 for rung 9 or 10 was measured on what is now the tiled kernel 12 or 13 (tuning
#: databases and tuning journals both became version 2 with that renumbering)
RENUMBERED: dict[int, dict[int, int]] = {1: {9: 12, 10: 13}}


def renumbered(rung: Any, version: Any) -> Any:
    """The number a rung stored by a database of `version` has today (anything that is not a
    rung number is returned as it is, for `entry_problem` to refuse)."""
    if not is_int(version) or not is_int(rung):
        return rung
    for v in range(int(version), VERSION):
        rung = RENUMBERED.get(v, {}).get(rung, rung)
    return rung


def user_results_dir() -> Path:
    """Where a user's own tuning goes by default: the per-user data folder (platformdirs), so
    tuning one's device never writes into an installed package or a checkout."""
    return Path(platformdirs.user_data_dir("clgemm", appauthor=False)) / "results"


def results_dir() -> Path:
    """Where results are written: $CLGEMM_RESULTS if set, else the user's results folder. Never
    the package's shipped databases, which change only when asked (--database)."""
    return settings.results() or user_results_dir()


#: the environment variable that turns the shipped databases off (0) for a run that must see
#: nothing but its own results folder
SHIPPED_SWITCH = settings.SHIPPED_TUNING


def read_roots() -> list[Path]:
    """Where databases are read from: the folder results are written to ($CLGEMM_RESULTS, else
    the user's results folder), then the databases shipped in the package unless
    $CLGEMM_SHIPPED_TUNING is 0. A folder named twice is read once."""
    roots = [results_dir()] + ([TUNING] if settings.shipped_tuning() else [])
    out: list[Path] = []
    for root in roots:
        if all(real_path(root) != real_path(r) for r in out):
            out.append(root)
    return out


def is_shipped(root: Path) -> bool:
    """Whether a folder read is the one of databases shipped in the package."""
    return real_path(root) == real_path(TUNING)


def database_path(device_key: str, root: Path | None = None) -> Path:
    return (root or results_dir()) / f"{device_key}.json"


#: an entry's provenance key: its tune measured only configurations of the tiled kernel that
#: read B as it lies, since gemm() runs nothing else at its shape (`splits.reading_only`)
READS_B_ONLY = "reads_b_only"
#: an entry's provenance key: its tune counted a panels form's pack of both operands in the
#: form's time, as every call of it pays (`measure.rung_runner`); the speed of a panels entry
#: without it is its kernel's alone
PACK_COUNTED = "panels_pack_counted"


@dataclass
class Entry:
    rung: int
    shape: list[int]
    backend: str
    params: dict[str, int]
    ms: float
    gflops: float
    rel_error: float | None = None
    helper_ms: float | None = None
    repeats: int = 0
    warmup: int = 0
    times_ms: list[float] = field(default_factory=list)
    spread_ms: list[float] = field(default_factory=list)  # [min, max] of times_ms
    provenance: dict[str, Any] = field(default_factory=dict)
    #: how many products of `shape` were measured together, as one batched launch (1: a single
    #: product). A stack is its own slot: how fast a configuration multiplies one product says
    #: little of how fast it multiplies many at once, which fill the device between them.
    batch: int = 1

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Entry":
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in d.items() if k in known})

    def to_json(self) -> dict[str, Any]:
        """The entry as stored. A single product's entry has no `batch` key, so files written
        before stacks had slots of their own read and write back unchanged; a stack's names its
        batch beside its shape."""
        d = asdict(self)
        batch = d.pop("batch")
        if is_int(batch) and batch == 1:
            return d
        out: dict[str, Any] = {}
        for name, value in d.items():
            out[name] = value
            if name == "shape":
                out["batch"] = batch
        return out

    def slot(self) -> tuple[int, tuple[int, ...], str, int]:
        """What an entry competes for: one rung at one shape and backend, a single product or
        a stack of one size; the best measured configuration is kept per slot."""
        return self.rung, tuple(self.shape), self.backend, self.batch

    def same_slot(self, other: "Entry") -> bool:
        return self.slot() == other.slot()


def _positive(value: Any) -> bool:
    return is_finite(value) and value > 0


def _non_negative_or_none(value: Any) -> bool:
    return value is None or (is_finite(value) and value >= 0)


def _count(value: Any) -> bool:
    return is_int(value) and value > 0


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and all(is_finite(v) for v in value)


#: optional fields of an entry, what each must be, and how that is said
OPTIONAL_CHECKS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("rel_error", _non_negative_or_none, "is not a non-negative number"),
    ("helper_ms", _non_negative_or_none, "is not a non-negative number"),
    ("repeats", lambda v: is_int(v) and v >= 0, "is not a non-negative integer"),
    ("warmup", lambda v: is_int(v) and v >= 0, "is not a non-negative integer"),
    ("times_ms", _numbers, "is not a list of numbers"),
    ("spread_ms", _numbers, "is not a list of numbers"),
    ("provenance", lambda v: isinstance(v, dict), "is not an object"),
    ("batch", _count, "is not a positive integer"),
)


def entry_problem(d: Any) -> str | None:
    """Why a stored entry cannot be used, or None if it can: everything a lookup, a merge or a
    build reads from it is what it claims to be."""
    if not isinstance(d, dict):
        return f"{d!r} is not an object"
    if not is_int(d.get("rung")):
        return f"rung {d.get('rung')!r} is not an integer"
    shape = d.get("shape")
    if not (isinstance(shape, list) and len(shape) == 3
            and all(is_int(v) and v > 0 for v in shape)):
        return f"shape {shape!r} is not three positive integers"
    if not isinstance(d.get("backend"), str):
        return f"backend {d.get('backend')!r} is not a string"
    why = params_problem(d.get("params"))
    if why is not None:
        return why
    for name in ("ms", "gflops"):
        if not _positive(d.get(name)):
            return f"{name} {d.get(name)!r} is not a positive number"
    for name, ok, says in OPTIONAL_CHECKS:
        if name in d and not ok(d[name]):
            return f"{name} {d[name]!r} {says}"
    return None


def shape_distance(a: Sequence[int], b: Sequence[int]) -> float:
    """Euclidean distance of log sizes: 512 is as far from 1024 as 2048 is from 4096, which
    matches how tile choices change with size far better than a linear distance."""
    return math.sqrt(sum((math.log(x) - math.log(y)) ** 2 for x, y in zip(a, b)))


def run_problem(rung: Rung, params: Mapping[str, Any], limits: Any,
                shape: Sequence[int] | None) -> tuple[dict[str, int] | None, str | None]:
    """The stored set as `rung` runs it today on a device of these `limits` (None: what holds
    on any device) at `shape` (None: any), or None and why it cannot be run: a parameter the
    rung no longer has (measured on an earlier kernel), a value beyond a kernel's int, a broken
    constraint, a shape its tiles do not divide."""
    p = rung.complete(params)
    if p is None:
        extra = sorted(set(params) - set(rung.param_names())) if isinstance(params, Mapping) \
            else []
        if extra:
            return None, (f"rung {rung.number} has no parameter {', '.join(extra)} "
                          f"(an earlier parameter set)")
        return None, f"{params!r} is not a parameter set of rung {rung.number}"
    big = next((n for n, v in p.items() if abs(v) > INT_MAX), None)
    if big is not None:
        return None, f"{big}={p[big]} is beyond what a kernel's int holds"
    try:
        bad = rung.first_violation(p, limits)
        if bad is not None:
            return None, f"{_given(p, params)} breaks rung {rung.number}'s '{bad.name}'"
        if shape is not None:
            why = rung.size_problem(p, *shape)
            if why is not None:
                return None, f"{_given(p, params)} cannot do {'x'.join(map(str, shape))}: {why}"
    except ArithmeticError as exc:  # a zero where a constraint divides
        return None, f"{_given(p, params)} cannot be checked ({exc})"
    return p, None


def _given(complete: Mapping[str, int], stored: Any) -> str:
    """The values a stored set gives (not the defaults that complete it), as NAME=VALUE."""
    names = [n for n in complete if isinstance(stored, Mapping) and n in stored] or list(complete)
    return " ".join(f"{n}={complete[n]}" for n in names)


def usable_params(rung: Rung, params: Mapping[str, Any], limits: Any,
                  shape: Sequence[int] | None) -> dict[str, int] | None:
    """The stored set as this rung runs it here, or None where it cannot (`run_problem`)."""
    return run_problem(rung, params, limits, shape)[0]


@dataclass(frozen=True)
class Recorded:
    """What `Database.record` did with an entry and why, in words the tuner prints."""

    stored: bool
    why: str

    def __bool__(self) -> bool:
        return self.stored

    def text(self) -> str:
        return f"stored ({self.why})" if self.stored else f"not stored: {self.why}"


class Database:
    def __init__(self, path: Path, device_key: str, backend: str,
                 entries: Iterable[Entry] = (), invalid: Iterable[Any] = (),
                 meta: Mapping[str, str] | None = None, limits: Any = None):
        self.path = Path(path)
        self.device_key = device_key
        self.backend = backend
        self.entries: list[Entry] = list(entries)
        #: the file's entries that cannot be used, as read: never used, always written back
        self.invalid: list[Any] = list(invalid)
        #: the device as the lookup chain needs it: name, vendor, type, driver, family
        self.meta: dict[str, str] = dict(meta or {})
        #: the limits of the device the database was loaded for (`load`), which `record`
        #: checks stored entries against; None: only what holds on any device
        self.limits = limits

    def unusable(self, entry: Entry) -> str | None:
        """Why the lookup can never use `entry` on this database's device, or None."""
        try:
            rung = get_rung(entry.rung)
        except (UsageError, KeyError):
            return f"there is no rung {entry.rung}"
        return run_problem(rung, entry.params, self.limits, entry.shape)[1]

    def record(self, entry: Entry) -> Recorded:
        """Keep `entry` if its slot (rung, shape, backend and batch: `Entry.slot`) is empty, if
        it is faster than what is there, if it re-measures the same parameters (the newer
        measurement wins), or if what is there cannot be used here (`unusable`, however fast it
        claims to be); an entry that cannot be used itself never displaces one that can. The
        answer is true when the entry was kept, and says why it was or was not."""
        if entry.backend != self.backend:
            raise UsageError(f"database {self.path} is for backend {self.backend}, "
                             f"not {entry.backend}")
        why = entry_problem(entry.to_json())
        if why is not None:
            raise UsageError(f"database {self.path}: refusing to record an entry whose {why}")
        slot = [i for i, old in enumerate(self.entries) if old.same_slot(entry)]
        broken = {i: self.unusable(self.entries[i]) for i in slot}
        usable = [i for i in slot if broken[i] is None]
        mine = self.unusable(entry)
        if mine is not None and usable:
            return Recorded(False, f"it cannot be used here ({mine}); the stored entry can")
        if any(_uncounted_panels(self.entries[i], entry) for i in usable):
            return Recorded(False, "its speed leaves out the pack that gemm() runs before "
                                   "panels; the stored entry's time counts it")
        same = [i for i in slot if dict(self.entries[i].params) == dict(entry.params)]
        packing = [i for i in usable if _displaced_by(entry, self.entries[i])]
        ahead = [self.entries[i].gflops for i in usable
                 if i not in same and i not in packing and self.entries[i].gflops >= entry.gflops]
        if ahead:
            top = max(ahead)
            return Recorded(False, f"{top:.1f} GFLOP/s stored at this slot is "
                                   f"{'faster' if top > entry.gflops else 'as fast'}")
        said = [broken[i] for i in slot if broken[i] is not None]
        if said:
            why = f"replaces an unusable entry: {said[0]}"
        elif same:
            why = "re-measures the stored parameters"
        elif packing and any(_uncounted_panels(entry, self.entries[i]) for i in packing):
            why = "replaces panels whose speed left out the pack that gemm() runs before them"
        elif packing:
            why = ("replaces one measured reading a packed BT, where gemm() reads B as it "
                   "lies")
        elif slot:
            why = f"faster than the {max(self.entries[i].gflops for i in slot):.1f} GFLOP/s stored"
        else:
            why = "the first at this slot"
        at = slot[0] if slot else len(self.entries)
        rest = [e for i, e in enumerate(self.entries) if i not in slot]
        self.entries = rest[:at] + [entry] + rest[at:]
        return Recorded(True, why)

    def to_json(self) -> dict[str, Any]:
        entries = sorted(self.entries, key=lambda e: (e.rung, e.shape, e.batch))
        out = {"format": FORMAT, "version": VERSION, "device": self.device_key,
               "backend": self.backend}
        if self.meta:
            out["meta"] = self.meta
        return {**out, "entries": [e.to_json() for e in entries]
                + [_finite(d) for d in self.invalid]}

    def save(self) -> Path:
        """Merge with the file as it is now, then replace it atomically; no other save of the
        same file runs in between."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FileWriteError(f"cannot write database {self.path}: {reason(exc)}") from None
        with exclusive(self.path):
            if self.path.exists():
                self._merge(_read(self.path, self.device_key, self.backend))
            write_atomic(self.path, json.dumps(self.to_json(), indent=1, allow_nan=False) + "\n",
                         "database")
        return self.path

    def _merge(self, on_disk: "Database") -> None:
        mine = self.entries
        self.entries = on_disk.entries
        self.invalid = on_disk.invalid
        self.meta = {**on_disk.meta, **self.meta}
        for e in mine:
            self.record(e)


def _uncounted_panels(entry: Entry, stored: Entry) -> bool:
    """Whether `stored` is a panels configuration of the tiled kernel whose speed is its
    kernel's alone, and `entry` comes from a tune that counted the panels' pack."""
    return (stored.rung == TILED.number and bool(entry.provenance.get(PACK_COUNTED))
            and not stored.provenance.get(PACK_COUNTED)
            and bool(TILED.resolve(dict(stored.params))["PANELS"]))


def _displaced_by(entry: Entry, stored: Entry) -> bool:
    """Whether `stored` gives way to `entry` at their slot, however fast: `entry` comes from a
    tune whose space held only configurations of the tiled kernel that read B as it lies
    (`READS_B_ONLY`), and `stored` was not measured so. Either it cannot read B, so gemm()
    would run it behind a pack of B that its stored speed does not count; or it can, but its
    measurement ran a helper first (`helper_ms`: the transpose of B, before gemm() read B
    there), so its speed is of a launch reading a packed BT, which gemm() no longer runs (the
    1024-cubed entry through OpenCL kept out that way a tune's reader that ran the call
    faster: results/h100/stale-reader). A reader measured with no helper before it read B
    already, flag or not. Likewise a panels entry whose speed is its kernel's alone gives way
    to an entry of a tune that counted the panels' pack (`PACK_COUNTED`): gemm() runs that pack
    before every call of it."""
    if stored.rung != TILED.number:
        return False
    if _uncounted_panels(entry, stored):
        return True
    if not entry.provenance.get(READS_B_ONLY):
        return False
    if not reads_b_itself(stored.params):
        return True
    return not stored.provenance.get(READS_B_ONLY) and stored.helper_ms is not None


def _read(path: Path, device_key: str, backend: str, data: Any = None) -> Database:
    """The database at `path` for this device key and backend; `data` is the file's JSON where
    the caller already parsed it."""
    if data is None:
        data = read_json(path, "database")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{path}: not a clgemm tuning database")
    if data.get("device") != device_key:
        raise UsageError(f"database {path} belongs to device '{data.get('device')}', "
                         f"not '{device_key}': refusing it")
    if data.get("backend", backend) != backend:
        raise UsageError(f"database {path} is for backend '{data.get('backend')}', "
                         f"not '{backend}': refusing it")
    raw = data.get("entries", [])
    if not isinstance(raw, list):
        raise UsageError(f"database {path}: 'entries' is not a list")
    version = data.get("version", 1)
    if not is_int(version) or version > VERSION:
        # a newer clgemm's file: its entries may mean what this one cannot tell, and a save
        # would write it back in the older format
        raise UsageError(f"database {path} is of format version {version!r}; this clgemm reads "
                         f"versions up to {VERSION} (a newer clgemm wrote it)")
    if version < VERSION:  # rungs renumbered since: read them as they are now
        raw = [{**d, "rung": renumbered(d["rung"], version)}
               if isinstance(d, dict) and "rung" in d else d for d in raw]
    entries, invalid, reasons = [], [], []
    for i, d in enumerate(raw, 1):
        why = entry_problem(d)
        if why is None:
            entries.append(Entry.from_json(d))
        else:
            invalid.append(d)
            reasons.append(f"entry {i}: {why}")
    if reasons:
        _warn_once(path, reasons)
    meta = data.get("meta")
    meta = {str(k): str(v) for k, v in meta.items()} if isinstance(meta, dict) else {}
    return Database(path, device_key, backend, entries, invalid, meta)


#: database files already warned about in this process (every lookup reads the file again)
_WARNED: set[str] = set()


def _warn_once(path: Path, reasons: list[str]) -> None:
    key = str(Path(path).resolve())
    if key in _WARNED:
        return
    _WARNED.add(key)
    n = len(reasons)
    warnings.warn(f"clgemm: database {path}: {n} invalid entr{'y' if n == 1 else 'ies'} "
                  f"skipped (kept in the file); {reasons[0]}", RuntimeWarning, stacklevel=4)


def _finite(obj: Any) -> Any:
    """NaN and inf become null, which JSON can hold: a kept invalid entry read from a file with
    a NaN in it (Python's reader takes one) stays invalid and the file stays JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def device_meta(device: Any) -> dict[str, str]:
    """What a database records of its device, so that other devices can find it by family."""
    fields = {"name": "name", "vendor": "vendor", "type": "type", "driver": "driver_version",
              "family": "family"}
    return {k: str(getattr(device, attr)) for k, attr in fields.items()
            if getattr(device, attr, None) is not None}


def read_any(path: Path, text: str | bytes | None = None) -> Database:
    """A database file whatever device it belongs to (the lookup chain reads them all); `text`
    is the file's content where the caller already read it."""
    data = read_json(path, "database") if text is None else parse_json(text, f"database {path}")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{path}: not a clgemm tuning database")
    key, backend = data.get("device"), data.get("backend")
    if not isinstance(key, str) or not isinstance(backend, str):
        raise UsageError(f"{path}: no device key or backend")
    return _read(path, key, backend, data)


def load(device: Any, path: Path | None = None) -> Database:
    """The database of `device` (a DeviceInfo: its key and backend), empty if none exists yet."""
    path = Path(path) if path else database_path(device.key)
    limits = device.limits() if callable(getattr(device, "limits", None)) else None
    if not path.exists():
        return Database(path, device.key, device.backend, meta=device_meta(device),
                        limits=limits)
    db = _read(path, device.key, device.backend)
    db.meta = {**db.meta, **device_meta(device)}
    db.limits = limits
    return db
