"""A user's own tuning beside the shipped one, on the device the tests run on: a tune of one rung
at a small shape leaves gemm()'s choices as they were; $CLGEMM_RESULTS chooses where results go
and hides nothing, while $CLGEMM_SHIPPED_TUNING=0 does; the commands name the databases read;
the tuner replaces an entry nothing can use and says why it stored or did not store; and a
database it cannot write is one error line."""

from __future__ import annotations

import dataclasses
import errno
import json
import os

import pytest

import clgemm
from clgemm.cli import main
from clgemm.cli.ladder_tables import tuning_notes
from clgemm.configs import database, lookup
from clgemm.configs.database import Entry, database_path, device_meta, load
from clgemm.core import files
from clgemm.library import gemm as api
from clgemm.rungs import get_rung

#: sizes of the made-up tiled-kernel measurements in the shipped folder, with their speeds
TILED_AT = ((512, 40.0), (1024, 60.0), (2048, 80.0))


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """(results, shipped): $CLGEMM_RESULTS, and a folder standing in for the package's
    databases, both empty, with every remembered lookup and choice dropped around the test."""
    results, shipped = tmp_path / "results", tmp_path / "shipped"
    results.mkdir()
    shipped.mkdir()
    monkeypatch.setenv("CLGEMM_RESULTS", str(results))
    monkeypatch.delenv(database.SHIPPED_SWITCH, raising=False)
    monkeypatch.setattr(database, "TUNING", shipped)
    api.clear_caches()
    yield results, shipped
    api.clear_caches()


def _sibling(device):
    """Another device of the device's backend and type, of no family of its: its database is
    the `default: CPU` (or GPU) level of the chain."""
    return dataclasses.replace(device, name="Made-up " + device.type, vendor="Nobody",
                               driver_version="0.0", compute_capability="")


def _usable(device, rung: int, params: dict) -> dict:
    full = get_rung(rung).resolve(params)
    if get_rung(rung).first_violation(full, device.limits()) is not None:
        pytest.skip(f"rung {rung} with {params} does not fit {device.name}")
    return full


def _write(folder, device, entries) -> None:
    db = load(device, database_path(device.key, folder))
    db.entries = list(entries)
    db.meta = device_meta(device)
    db.save()
    lookup.forget()


def _entry(device, rung, size, gflops, params) -> Entry:
    return Entry(rung, [size] * 3, device.backend, dict(params), 1.0, gflops)


SHAPES = [(s,) * 3 for s in (256, 512, 1024, 2048)] + [(1024, 1024, 128)]


def _choices(device) -> dict:
    api.clear_caches()
    lookup.forget()
    return {s: api.choose_kernel(device, *s) for s in SHAPES}


def test_a_tune_of_rung_3_at_128_leaves_gemm_as_it_was(device, folders):
    """The shipped tiled kernel and a user's rung 3 measured at 128^3 compete by what each
    promises at the shape: gemm() keeps the tiled kernel, measured nearer and faster."""
    results, shipped = folders
    tiled = _usable(device, 12, {})
    _write(shipped, _sibling(device), [_entry(device, 12, s, g, tiled) for s, g in TILED_AT])
    before = _choices(device)
    assert {c.rung for c in before.values()} <= {12, 11}
    assert clgemm.configure(device, shape=1024).rung == 12
    _write(results, device, [_entry(device, 3, 128, 4.7, _usable(device, 3, {"TS": 8, "WPT": 8}))])
    after = _choices(device)
    assert after == before
    assert clgemm.configure(device, 3, 128).source == "tuned"  # rung 3 itself: the user's entry


def test_the_results_folder_hides_nothing_and_the_switch_does(device, folders, capsys,
                                                              monkeypatch):
    """$CLGEMM_RESULTS set: `clgemm devices` still finds the shipped tuning and says which
    folders it read; $CLGEMM_SHIPPED_TUNING=0 leaves the shipped databases unread, and says so."""
    results, shipped = folders
    _write(shipped, device, [_entry(device, 3, 64, 1.0, _usable(device, 3, {"TS": 16}))])

    def listed() -> tuple[str, str]:
        assert main(["devices", "--json", "-"]) == 0
        out = capsys.readouterr()
        mine = next(d for d in json.loads(out.out) if d["key"] == device.key)
        return mine["tuning"], out.err

    level, said = listed()
    assert level == "tuned"
    assert f"{results} (results: 0 databases)" in said.replace("\n  ", " ")
    assert f"{shipped} (shipped with clgemm: 1 database)" in said.replace("\n  ", " ")
    notes = " ".join(tuning_notes(device, [3], {3: "default"}, use_defaults=False))
    assert str(results) in notes and str(shipped) in notes
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "0")
    level, said = listed()
    assert level == "none"
    assert str(shipped) not in said and "(CLGEMM_SHIPPED_TUNING=0)" in said
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "sometimes")
    assert main(["devices"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: CLGEMM_SHIPPED_TUNING='sometimes': give 0 to leave the shipped "
                   "tuning databases unread, or 1 (the default) to read them"]


def _tune(device, path):
    return clgemm.tune(device, rungs=3, shapes=64, budget=2, confirm=1, repeats=1, warmup=0,
                       jobs=0, database=path, verbose=False)


def test_the_tuner_replaces_an_unusable_entry_and_says_why(device, folders):
    results, _ = folders
    path = results / "mine.json"
    path.write_text(json.dumps({
        "format": database.FORMAT, "version": database.VERSION, "device": device.key,
        "backend": device.backend, "entries": [
            {"rung": 3, "shape": [64, 64, 64], "backend": device.backend,
             "params": {"TS": 16, "WPT": 4, "OLDPARAM": 1}, "ms": 1.0, "gflops": 1e6}]}))
    result = _tune(device, path)
    (shape, outcome), = result.outcomes
    assert outcome.stored and outcome.why == (
        "stored (replaces an unusable entry: rung 3 has no parameter OLDPARAM (an earlier "
        "parameter set))")
    assert "rung 3: stored (replaces an unusable entry" in result.table()
    entries = json.loads(path.read_text())["entries"]
    assert [e["params"] for e in entries] == [dict(outcome.entry.params)]

    faster = {**entries[0], "params": {"TS": 16, "WPT": 4}, "gflops": 1e6}
    path.write_text(json.dumps({**json.loads(path.read_text()), "entries": [faster]}))
    result = _tune(device, path)
    (shape, outcome), = result.outcomes
    assert not outcome.stored
    assert outcome.why == "not stored: 1000000.0 GFLOP/s stored at this slot is faster"
    assert f"rung 3: {outcome.why}" in result.table()
    assert json.loads(path.read_text())["entries"] == [faster]


TUNE = ["tune", "--device", "0", "--rungs", "3", "--size", "64", "--budget", "1", "--jobs", "0",
        "--confirm", "0", "--repeats", "1", "--warmup", "0"]


def _one_error(capsys, needle: str) -> None:
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0], err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == errors[0]


def test_tune_reports_an_unwritable_database_in_one_line(device, folders, capsys, monkeypatch):
    """A folder where the database's lock goes, then a full disk at the save: after measuring,
    one error line naming the file and the reason, exit status 1, the old file intact."""
    results, _ = folders
    if device.index != 0 or device.backend != "opencl":
        pytest.skip("the command runs on device 0")
    path = database_path(device.key, results)
    (results / f"{path.name}.lock").mkdir()
    assert main(TUNE) == 1
    _one_error(capsys, f"error: cannot lock {path}: ")
    assert not path.exists()

    (results / f"{path.name}.lock").rmdir()
    _write(results, device, [_entry(device, 3, 128, 1.0, _usable(device, 3, {"TS": 16}))])
    before = path.read_text()
    real = os.replace

    def full(src, dst, *args, **kwargs):
        if os.path.basename(str(dst)) == path.name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(files.os, "replace", full)
    assert main(TUNE) == 1
    monkeypatch.setattr(files.os, "replace", real)
    _one_error(capsys, f"error: cannot write database {path}: No space left on device")
    assert path.read_text() == before
    assert sorted(p.name for p in results.iterdir() if p.name.startswith(".")) == []
