"""The kernels that were rungs 9 and 10 are the library kernels 12 and 13 now: files written
before (tuning databases of version 1, journals of version 1) read with those numbers, are
written back in the present version, and the committed results carry them already."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from clgemm.configs import database, lookup
from clgemm.core.errors import UsageError
from clgemm.core.paths import RESULTS, TUNING
from clgemm.course import committed
from clgemm.course.data import load_results
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import GEMM_RUNGS, LIBRARY, LIBRARY_NAMES, REGISTRY, get_rung, parse_rungs
from clgemm.tuner import journal

DEV = SimpleNamespace(key="opencl-acme-cpu-1.0", backend="opencl", limits=lambda: DeviceLimits())


def _v1_entry(rung: int, params: dict) -> dict:
    return {"rung": rung, "shape": [512, 512, 512], "backend": "opencl", "params": params,
            "ms": 1.0, "gflops": 10.0 + rung}


def test_numbers_and_names():
    assert sorted(REGISTRY) == list(range(1, 11))
    assert LIBRARY_NAMES == {"direct": 11, "tiled": 12, "tiled-any": 13, "skinny": 14}
    assert [get_rung(n).slug for n in (11, 12, 13)] == ["direct", "tiled", "tiled-any"]
    assert [get_rung(n).kernel for n in (12, 13)] == ["gemm_tiled", "gemm_tiled_any"]
    assert parse_rungs("all") == list(range(1, 11))
    assert parse_rungs("8-9,tiled,tiled-any,direct") == [8, 9, 11, 12, 13]
    assert parse_rungs("all,TILED") == list(range(1, 11)) + [12]
    assert GEMM_RUNGS == tuple(range(1, 11)) + (12, 13)
    assert parse_rungs("skinny,direct") == [11, 14]
    for bad in ("15", "tiled-some", "9-8"):
        with pytest.raises(UsageError) as info:
            parse_rungs(bad)
        if bad == "15":
            for name in ("'direct'", "'tiled'", "'tiled-any'", "'skinny'", "1-10"):
                assert name in str(info.value)


def test_version_1_database_reads_with_the_new_numbers(tmp_path):
    tiled, rung8 = get_rung(12).defaults(), get_rung(8).defaults()
    path = tmp_path / f"{DEV.key}.json"
    path.write_text(json.dumps({
        "format": database.FORMAT, "version": 1, "device": DEV.key, "backend": "opencl",
        "entries": [_v1_entry(9, tiled), _v1_entry(10, get_rung(13).defaults()),
                    _v1_entry(8, rung8), {"rung": 9, "shape": "broken"}]}))
    with pytest.warns(RuntimeWarning, match="invalid entr"):
        db = database.load(DEV, path)
    assert sorted(e.rung for e in db.entries) == [8, 12, 13]
    assert db.invalid == [{"rung": 12, "shape": "broken"}]
    assert [f.params for f in lookup.candidates(DEV, get_rung(12), (512,) * 3, [tmp_path])] \
        == [tiled]
    assert lookup.candidates(DEV, get_rung(9), (512,) * 3, [tmp_path]) == []
    db.save()
    data = json.loads(path.read_text())
    assert data["version"] == database.VERSION == 2
    assert sorted(e["rung"] for e in data["entries"]) == [8, 12, 12, 13]
    again = database.load(DEV, path)                       # version 2: read as it is
    assert sorted(e.rung for e in again.entries) == [8, 12, 13]


def test_renumbered_leaves_the_present_version_alone():
    assert database.renumbered(9, 1) == 12 and database.renumbered(10, 1) == 13
    assert database.renumbered(9, 2) == 9 and database.renumbered(8, 1) == 8
    assert database.renumbered("x", 1) == "x"


def _v1_journal(path: Path, rung: int) -> None:
    header = {"format": journal.FORMAT, "version": 1, "device": "d", "backend": "opencl",
              "driver": "1", "size": [64, 64, 64], "rungs": [rung],
              "params": {str(rung): {}}, "kernels": {str(rung): "abc"},
              "strategies": {str(rung): "annealing"}}
    record = {"kind": "search", "rung": rung, "config": get_rung(12).defaults(), "status": "ok",
              "gflops": 5.0}
    path.write_text(json.dumps(header) + "\n" + json.dumps(record) + "\n")


def test_version_1_journal_reads_with_the_new_numbers(tmp_path):
    path = tmp_path / "rung9-64x64x64.jsonl"
    _v1_journal(path, 9)
    header, records, _ = journal.read_journal(path)
    assert header["rungs"] == [12] and set(header["kernels"]) == {"12"}
    assert set(header["params"]) == set(header["strategies"]) == {"12"}
    assert [r["rung"] for r in records] == [12]
    assert [m.rung for m in committed._from_journal(path)] == [12]
    # resuming it for the new rung 9 is refused by name, for kernel 12 accepted
    new = {"backend": "opencl", "driver": "1", "device": "d", "size": [64, 64, 64]}
    with pytest.raises(UsageError, match="its rungs is 12, this run's is 9"):
        journal.check_journal(path, {**new, "rungs": [9]}, resume=True)
    assert journal.check_journal(path, {**new, "rungs": [12]}, resume=True) is not None


def test_committed_results_carry_the_new_numbers():
    """Every committed database and journal is of the present version; the kernels measured as
    rungs 9 and 10 appear as 12 and 13, and whatever is stored for the new rungs 9 and 10 has
    their parameters (was measured on them)."""
    shipped = sorted(TUNING.glob("*.json"))
    assert shipped
    for path in shipped:
        data = json.loads(path.read_text())
        assert data.get("format") == database.FORMAT, path
        assert data["version"] == database.VERSION, path
    for path in sorted((RESULTS / "journals").rglob("*.jsonl")):
        head = json.loads(path.read_text().split("\n", 1)[0])
        assert head["version"] == journal.VERSION, path
        assert path.name.startswith(f"rung{head['rungs'][0]}-"), path
        if head["rungs"][0] in (9, 10):
            for line in path.read_text().splitlines()[1:]:
                rec = json.loads(line)
                if "params" in rec:
                    assert get_rung(head["rungs"][0]).complete(rec["params"]) is not None, path
    results = load_results(RESULTS, TUNING)
    for db in results.databases:
        for e in db.entries:
            if e.rung in (12, 13):
                assert get_rung(e.rung).complete(e.params) is not None or "PAD" in e.params
            if e.rung in (9, 10):
                assert get_rung(e.rung).complete(e.params) is not None, (db.path, e.rung)
    measured_9 = [r for r in results.runs if r.row(9)]
    assert measured_9
    for run in measured_9:   # measured with the present rung 9: its parameters
        assert set(run.row(9).params) == set(get_rung(9).param_names())
