"""The committed results, found by what the files hold rather than by their names.

Every JSON file under `results/` and the tuning databases shipped in `clgemm/tuning/` are read
once and sorted into ladder runs, tuned-against-default comparisons, bench runs and tuning
databases by their contents; journals are the `.jsonl` files under `results/journals/`. New
devices, sizes or backends therefore appear in the course as soon as their files are committed,
with no list to keep up to date. Everything is sorted (devices by name, backend and key; runs
by size and configuration) so that the pages generated from it are the same on every machine.
Only regular files are read: a FIFO or a folder named like a result is not one, and reading a
FIFO would wait for ever.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from clgemm.backends.registry import label
from clgemm.configs import database as _database
from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file, json_files, read_json
from clgemm.tuner.journal import read_journal

#: order of configurations in tables: what the defaults give, then what tuning gives
CONFIG_ORDER = ("default", "tuned", "user")


@dataclass(frozen=True)
class Device:
    """One device as one backend sees it (a GPU with two backends is two devices here, as it has
    two tuning databases)."""

    key: str
    name: str
    backend: str
    kind: str = ""                     # "GPU", "CPU"; "" when no run file describes the device
    compute_units: int | None = None
    local_mem_bytes: int | None = None
    max_work_group_size: int | None = None
    driver: str = ""
    platform: str = ""
    #: set when another device in the results has the same name and backend (another driver)
    with_driver: bool = False

    @property
    def label(self) -> str:
        backend = label(self.backend)
        if self.with_driver:
            return f"{self.name} ({backend}, driver {self.driver or '?'})"
        return f"{self.name} ({backend})"

    @property
    def order(self) -> tuple:
        return (self.name.lower(), self.backend, self.key)


@dataclass(frozen=True)
class Row:
    """One rung's measurement in a run."""

    rung: int
    status: str
    gflops: float | None
    params: dict
    source: str                        # where the parameters came from: tuned, default, user
    pct_of_reference: float | None = None


@dataclass(frozen=True)
class Reference:
    name: str
    gflops: float | None               # None unless the library ran and passed the check
    status: str


@dataclass(frozen=True)
class Run:
    """A ladder-shaped set of measurements: every rung once, on one device and size."""

    path: str                          # relative to the repository, with '/'
    device: Device
    size: tuple[int, int, int]
    config: str
    rows: tuple[Row, ...]
    references: tuple[Reference, ...] = ()
    base: str | None = None            # the reference that "% of reference" compares with
    date: str = ""
    command: str = ""
    kind: str = "ladder"               # or "vs-defaults" (tuned and default in alternating rounds)

    def row(self, rung: int) -> Row | None:
        return next((r for r in self.rows if r.rung == rung), None)

    @property
    def order(self) -> tuple:
        config = CONFIG_ORDER.index(self.config) if self.config in CONFIG_ORDER else 9
        return (self.device.order, self.size, self.kind != "ladder", config, self.path)


@dataclass(frozen=True)
class Bench:
    path: str
    device: Device
    rows: tuple[dict, ...]
    date: str = ""
    command: str = ""


@dataclass(frozen=True)
class TunedEntry:
    rung: int
    shape: tuple[int, int, int]
    params: dict
    gflops: float
    strategy: str = ""
    evaluations: int | None = None
    space: int | None = None
    date: str = ""
    command: str = ""
    #: products measured together in one launch (1: a single product)
    batch: int = 1


@dataclass(frozen=True)
class TuningDatabase:
    path: str
    device: Device
    entries: tuple[TunedEntry, ...]


@dataclass(frozen=True)
class JournalFile:
    path: str
    device: Device
    size: tuple[int, int, int]
    header: dict
    records: tuple[dict, ...]          # search measurements only

    def strategy(self, rung: int) -> str:
        return str((self.header.get("strategies") or {}).get(str(rung))
                   or self.header.get("strategy") or "?")

    def rungs(self) -> list[int]:
        return sorted({int(r["rung"]) for r in self.records if "rung" in r})

    def records_of(self, rung: int) -> list[dict]:
        return [r for r in self.records if r.get("rung") == rung]


@dataclass
class Results:
    """Everything committed under one results folder."""

    folder: Path
    runs: list[Run] = field(default_factory=list)
    benches: list[Bench] = field(default_factory=list)
    databases: list[TuningDatabase] = field(default_factory=list)
    journals: list[JournalFile] = field(default_factory=list)

    def devices(self) -> list[Device]:
        """Every device that any file speaks of, sorted."""
        seen: dict[str, Device] = {}
        for d in ([r.device for r in self.runs] + [b.device for b in self.benches]
                  + [db.device for db in self.databases] + [j.device for j in self.journals]):
            if d.key not in seen or (not seen[d.key].kind and d.kind):
                seen[d.key] = d
        return sorted(seen.values(), key=lambda d: d.order)

    def file(self, relative: str) -> Path:
        """The file behind a relative path held by a run, bench, database or journal."""
        return self.folder.parent / relative


def _device_from_json(d: dict) -> Device:
    return Device(key=str(d["key"]), name=str(d.get("name", d["key"])),
                  backend=str(d.get("backend", "")), kind=str(d.get("type", "")),
                  compute_units=d.get("compute_units"), local_mem_bytes=d.get("local_mem_bytes"),
                  max_work_group_size=d.get("max_work_group_size"),
                  driver=str(d.get("driver_version", "")), platform=str(d.get("platform", "")))


def _load_json(path: Path) -> Any:
    return read_json(path, "result file")


def _size(value: Any, path: Path) -> tuple[int, int, int]:
    try:
        m, n, k = (int(x) for x in value)
    except (TypeError, ValueError):
        raise UsageError(f"{path}: 'size' should be three integers, not {value!r}") from None
    return (m, n, k)


def _ladder_run(rel: str, path: Path, data: dict) -> Run:
    rows = []
    sources = set()
    for r in data["rows"]:
        source = str(r.get("params_source", "default"))
        sources.add(source)
        ok = r.get("status") == "ok"
        rows.append(Row(rung=int(r["rung"]), status=str(r.get("status", "?")),
                        gflops=r.get("gflops") if ok else None, params=dict(r.get("params") or {}),
                        source=source, pct_of_reference=r.get("pct_of_reference") if ok else None))
    refs = tuple(Reference(name=str(x["name"]),
                           gflops=x.get("gflops") if x.get("status", "ok") == "ok" else None,
                           status=str(x.get("status", "ok")))
                 for x in data.get("references") or [])
    config = next((c for c in ("user", "tuned") if c in sources), "default")
    prov = data.get("provenance") or {}
    return Run(path=rel, device=_device_from_json(data["device"]), size=_size(data["size"], path),
               config=config, rows=tuple(sorted(rows, key=lambda r: r.rung)), references=refs,
               base=data.get("pct_of_reference_base"), date=str(prov.get("date", "")),
               command=str(prov.get("command", "")))


def _vs_defaults_runs(rel: str, path: Path, data: dict) -> list[Run]:
    """A tuned-against-defaults file holds two ladders measured in alternating rounds."""
    device = _device_from_json(data["device"])
    prov = data.get("provenance") or {}
    runs = []
    for config in ("default", "tuned"):
        rows = tuple(sorted(
            (Row(rung=int(r["rung"]), status=str(r.get("status", "?")),
                 gflops=r.get(f"{config}_gflops") if r.get("status") == "ok" else None,
                 params=dict(r.get(config) or {}), source=config)
             for r in data["rows"]), key=lambda r: r.rung))
        runs.append(Run(path=rel, device=device, size=_size(data["size"], path), config=config,
                        rows=rows, date=str(prov.get("date", "")),
                        command=str(prov.get("command", "")), kind="vs-defaults"))
    return runs


def _tuning_database(rel: str, data: dict, devices: dict[str, Device]) -> TuningDatabase:
    key = str(data.get("device", ""))
    entries = []
    first_prov: dict = {}
    version = data.get("version", 1)
    for raw in data.get("entries", []):
        e = _database.Entry.from_json(raw)
        e.rung = _database.renumbered(e.rung, version)  # as an older database's rungs read now
        prov = e.provenance or {}
        first_prov = first_prov or prov
        try:
            m, n, k = (int(x) for x in e.shape)
        except (TypeError, ValueError):
            raise UsageError(f"{rel}: shape {e.shape!r} should be three integers") from None
        entries.append(TunedEntry(rung=int(e.rung), shape=(m, n, k),
                                  params=dict(e.params), gflops=float(e.gflops),
                                  strategy=str(prov.get("strategy", "")),
                                  evaluations=prov.get("evaluations"), space=prov.get("space"),
                                  date=str(prov.get("date", "")),
                                  command=str(prov.get("command", "")),
                                  batch=int(e.batch) if isinstance(e.batch, int) else 1))
    device = devices.get(key) or Device(key=key, name=str(first_prov.get("device", key)),
                                        backend=str(data.get("backend", "")),
                                        driver=str(first_prov.get("driver", "")),
                                        platform=str(first_prov.get("platform", "")))
    return TuningDatabase(path=rel, device=device,
                          entries=tuple(sorted(entries,
                                               key=lambda e: (e.rung, e.shape, e.batch))))


def _journal(rel: str, path: Path, devices: dict[str, Device]) -> JournalFile:
    header, records, _ = read_journal(path)
    key = str(header.get("device", ""))
    device = devices.get(key) or Device(key=key, name=str(header.get("device_name", key)),
                                        backend=str(header.get("backend", "")),
                                        driver=str(header.get("driver", "")),
                                        platform=str(header.get("platform", "")))
    search = tuple(r for r in records if "config" in r and r.get("kind", "search") == "search")
    return JournalFile(path=rel, device=device, size=_size(header.get("size"), path),
                       header=header, records=search)


def load_results(folder: Path, tuning: Path | None = None) -> Results:
    """Read every result file under `folder` (normally `results/`), and the tuning databases in
    `tuning` (normally `clgemm/tuning/`, where the shipped ones live apart from the results a
    wheel leaves out). Both are named in pages relative to `folder`'s parent, the checkout."""
    folder = Path(folder)
    out = Results(folder=folder)
    databases = []
    shipped = sorted(p for p in Path(tuning).glob("*.json")
                     if is_regular_file(p)) if tuning is not None else []
    for path in json_files(folder) + shipped:
        rel = path.relative_to(folder.parent).as_posix()
        data = _load_json(path)
        if not isinstance(data, dict):
            continue
        fmt = data.get("format")
        rows = data.get("rows")
        try:
            if fmt == _database.FORMAT:
                databases.append((rel, data))
            elif fmt == "clgemm-bench":
                prov = data.get("provenance") or {}
                out.benches.append(Bench(path=rel, device=_device_from_json(data["device"]),
                                         rows=tuple(data.get("rows") or ()),
                                         date=str(prov.get("date", "")),
                                         command=str(prov.get("command", ""))))
            elif isinstance(rows, list) and rows and "device" in data and "size" in data:
                if "tuned_gflops" in rows[0] or "default" in rows[0]:
                    out.runs.extend(_vs_defaults_runs(rel, path, data))
                elif "gflops" in rows[0] or "status" in rows[0]:
                    out.runs.append(_ladder_run(rel, path, data))
        except (KeyError, TypeError, ValueError) as exc:
            raise UsageError(f"{rel}: unexpected contents ({type(exc).__name__}: {exc})") from None
    described = {r.device.key: r.device for r in out.runs}
    described.update({b.device.key: b.device for b in out.benches if b.device.key not in described})
    out.databases = sorted((_tuning_database(rel, data, described) for rel, data in databases),
                           key=lambda db: db.device.order)
    journals = folder / "journals"
    if journals.is_dir():
        out.journals = [_journal(p.relative_to(folder.parent).as_posix(), p, described)
                        for p in sorted(journals.rglob("*.jsonl")) if is_regular_file(p)]
        out.journals.sort(key=lambda j: (j.device.order, j.rungs(), j.size, j.path))
    _name_drivers(out)
    out.runs.sort(key=lambda r: r.order)
    out.benches.sort(key=lambda b: (b.device.order, b.path))
    return out


def _name_drivers(out: Results) -> None:
    """Where two devices share a name and a backend (the same GPU before and after a driver
    update), put the driver in their labels, so that no two rows of a table read the same."""
    keys: dict[tuple[str, str], set[str]] = {}
    for d in out.devices():
        keys.setdefault((d.name, d.backend), set()).add(d.key)
    shared = {k for group in keys.values() if len(group) > 1 for k in group}
    if not shared:
        return

    def fix(d: Device) -> Device:
        return replace(d, with_driver=True) if d.key in shared else d

    out.runs = [replace(r, device=fix(r.device)) for r in out.runs]
    out.benches = [replace(b, device=fix(b.device)) for b in out.benches]
    out.databases = [replace(db, device=fix(db.device)) for db in out.databases]
    out.journals = [replace(j, device=fix(j.device)) for j in out.journals]
