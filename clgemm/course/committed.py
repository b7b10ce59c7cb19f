"""Every measurement committed under `results/` and in the shipped tuning databases
(`clgemm/tuning/`), with the device record it was taken on.

The performance bound is only worth printing if no real result beats it, so the tests and
`scripts/bound_table.py` set each committed number against it: tuning databases and their
journals, ladder runs (kernel time alone), `ladder --vs-defaults` runs, and bench runs (whose
rung times include the transpose of B). A database or journal records only its device key; the
device's figures come from a ladder or bench file of the same key. What cannot be read (not a
regular file, not JSON, nesting too deep to parse) is not a measurement and is passed over.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

from clgemm.configs.database import renumbered
from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file, json_files, read_json
from clgemm.core.problem import Problem
from clgemm.rungs import GEMM_RUNGS, get_rung
from clgemm.tuner.journal import read_journal


@dataclass(frozen=True)
class Measurement:
    path: str
    #: "database", "journal", "ladder", "vs-defaults" or "bench"
    kind: str
    device_key: str
    rung: int
    params: dict[str, int]
    shape: tuple[int, int, int]
    gflops: float
    #: whether the time behind `gflops` includes the helper kernels
    helpers: bool = False
    #: how many products of `shape` were measured together (a stack)
    batch: int = 1

    @property
    def problem(self) -> Problem:
        return Problem(*self.shape, batch=self.batch)


def _results(root: Path) -> Iterator[tuple[Path, Any]]:
    """Each result file under `root` with what it holds; one that cannot be read is passed
    over."""
    for path in json_files(root):
        try:
            yield path, read_json(path, "result file")
        except UsageError:
            continue


def device_records(root: Path) -> dict[str, dict]:
    """Device key -> the device record of a ladder or bench file under `root`."""
    out = {}
    for _, data in _results(root):
        if isinstance(data, dict) and isinstance(data.get("device"), dict):
            out[data["device"]["key"]] = data["device"]
    return out


def _from_run(path: str, data: dict) -> list[Measurement]:
    key, out = data["device"]["key"], []
    if data.get("format") == "clgemm-bench":
        for row in data["rows"]:
            out += [Measurement(path, "bench", key, r["rung"], r["params"], tuple(row["shape"]),
                                r["gflops"], helpers=True)
                    for r in row.get("rungs", []) if r["status"] == "ok" and r.get("gflops")]
    elif data["rows"] and "tuned" in data["rows"][0]:
        out += [Measurement(path, "vs-defaults", key, r["rung"], r[which], tuple(data["size"]),
                            r[f"{which}_gflops"])
                for r in data["rows"] if r["status"] == "ok" for which in ("tuned", "default")]
    else:
        out += [Measurement(path, "ladder", key, r["rung"], r["params"], tuple(data["size"]),
                            r["gflops"]) for r in data["rows"] if r["status"] == "ok"]
    return out


def _from_database(path: str, data: dict) -> list[Measurement]:
    version = data.get("version", 1)  # rungs renumbered since an older version read as they are now
    return [Measurement(path, "database", data["device"], renumbered(e["rung"], version),
                        e["params"], tuple(e["shape"]), e["gflops"], batch=e.get("batch", 1))
            for e in data["entries"]]


def _from_journal(path: Path) -> list[Measurement]:
    if not is_regular_file(path):
        return []
    try:
        head, records, _ = read_journal(path)
        problem = Problem.of(head["size"])  # [M, N, K], or [BATCH, M, N, K] for a stack
    except UsageError:
        return []
    return [Measurement(str(path), "journal", head["device"], r["rung"], r["config"],
                        problem.as_tuple(), r["gflops"], batch=problem.batch)
            for r in records if r.get("status") == "ok" and r.get("gflops")]


def current(m: Measurement) -> bool:
    """Whether the measurement applies to its rung's present kernel (`Rung.complete`): what a
    rung's earlier version measured stays on record but says nothing about the bound of the
    present one."""
    return _params_now(m) is not None


def _params_now(m: Measurement) -> dict[str, int] | None:
    """The measurement's parameters as its rung reads them now (completed with the defaults
    of parameters added since), or None where they no longer apply (`current`)."""
    rung = get_rung(m.rung) if m.rung in GEMM_RUNGS else None
    return None if rung is None else rung.complete(m.params)


def measurements(*roots: Path) -> list[Measurement]:
    """Every correct, timed result under `roots` (the checkout's results and the shipped tuning
    databases live apart) taken with the rungs' present parameters."""
    out: list[Measurement] = []
    files = [f for root in roots for f in _results(root)]
    for path, data in files:
        if not isinstance(data, dict):
            continue
        if data.get("format") == "clgemm-tuning-database":
            out += _from_database(str(path), data)
        elif data.get("format") == "clgemm-call-bench":
            continue  # whole calls, timed with their other launches: no kernel's measurement
        elif isinstance(data.get("device"), dict) and "rows" in data:
            out += _from_run(str(path), data)
    for journal in sorted(j for root in roots for j in root.rglob("*.jsonl")):
        out += _from_journal(journal)
    now = [(m, _params_now(m)) for m in out]
    return [replace(m, params=params) for m, params in now if params is not None]
