"""The tuning database: round trip, nearest shape, what record keeps, atomic writes, refusal of
a foreign device key; and the ladder taking its parameters from it."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

from clgemm.configs.database import (PACK_COUNTED, READS_B_ONLY, Entry, database_path, load,
                                     shape_distance, usable_params)
from clgemm.core import files
from clgemm.core.errors import ClgemmError, UsageError
from clgemm.core.files import FileWriteError
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import get_rung
from clgemm.rungs.tiled import TILED

DEV = SimpleNamespace(key="opencl-acme-gpu-1.0", backend="opencl",
                      limits=lambda: DeviceLimits())


def _entry(rung=3, shape=(512, 512, 512), gflops=10.0, **params) -> Entry:
    return Entry(rung=rung, shape=list(shape), backend="opencl",
                 params=params or {"TS": 32, "WPT": 8}, ms=1.0, gflops=gflops, repeats=10,
                 times_ms=[0.9, 1.0, 1.2], spread_ms=[0.9, 1.2],
                 provenance={"date": "2026-01-01T00:00:00+00:00", "command": "clgemm tune",
                             "clgemm": "0.1.0", "driver": "1.0"})


def _usable(path: Path, number: int, shape: tuple[int, int, int]) -> list[dict]:
    """The stored parameter sets of a rung the lookup can use at `shape` on DEV."""
    db = load(DEV, path)
    rung = get_rung(number)
    found = [usable_params(rung, e.params, db.limits, shape) for e in db.entries
             if e.rung == number]
    return [p for p in found if p is not None]


def test_round_trip_and_shape_distance(tmp_path):
    path = tmp_path / "db.json"
    db = load(DEV, path)
    assert db.entries == []
    db.record(_entry(shape=(256, 256, 256), gflops=5.0, TS=16, WPT=4))
    db.record(_entry(shape=(2048, 2048, 2048), gflops=50.0, TS=64, WPT=8))
    db.record(_entry(rung=4, shape=(512, 512, 512), gflops=9.0, TS=32, WIDTH=4))
    db.save()
    again = load(DEV, path)
    assert [e.to_json() for e in again.entries] == [e.to_json() for e in db.entries]
    assert shape_distance((256,) * 3, (512,) * 3) == pytest.approx(3 ** 0.5 * 0.6931, 1e-3)
    data = json.loads(path.read_text())
    assert data["device"] == DEV.key and data["entries"][0]["provenance"]["command"]
    assert data["entries"][0]["spread_ms"] == [0.9, 1.2] and data["entries"][0]["repeats"] == 10


def test_record_keeps_the_faster_and_remeasures(tmp_path):
    db = load(DEV, tmp_path / "db.json")
    said = [db.record(_entry(gflops=10.0)),
            db.record(_entry(gflops=8.0, TS=16, WPT=2)),    # slower: kept out
            db.record(_entry(gflops=12.0, TS=16, WPT=2)),   # faster: replaces
            db.record(_entry(gflops=11.0, TS=16, WPT=2)),   # same params: newer wins
            db.record(_entry(gflops=11.0))]                 # as fast: kept out
    assert [bool(r) for r in said] == [True, False, True, True, False]
    assert [r.text() for r in said] == [
        "stored (the first at this slot)",
        "not stored: 10.0 GFLOP/s stored at this slot is faster",
        "stored (faster than the 10.0 GFLOP/s stored)",
        "stored (re-measures the stored parameters)",
        "not stored: 11.0 GFLOP/s stored at this slot is as fast"]
    assert len(db.entries) == 1 and db.entries[0].gflops == 11.0


def _tiled(gflops, reads_b_only=False, **params):
    """An entry of the tiled kernel; with `reads_b_only`, from a tune among readers of B."""
    e = _entry(rung=TILED.number, gflops=gflops, **{**TILED.defaults(), **params})
    e.params = TILED.resolve(e.params)
    if reads_b_only:
        e.provenance = {**e.provenance, READS_B_ONLY: True}
    return e


def test_an_entry_tuned_among_what_reads_b_displaces_one_that_packs_it(tmp_path):
    """A tune whose space held only tiled configurations reading B as it lies stores its best
    in place of a faster stored one that packs B (its speed left out the pack gemm() would
    run it behind), on record and on a merge; it does not displace one that reads B, nor
    does an entry from any other tune displace the packing one."""
    path = tmp_path / "db.json"
    db = load(DEV, path)
    packs = {"CACHE_B": 0, "VWN": 4}  # B straight from global, in vectors along N: from BT only
    assert db.record(_tiled(50.0, **packs))
    assert not db.record(_tiled(40.0, TSK=8))                       # an ordinary tune
    said = db.record(_tiled(40.0, reads_b_only=True, TSK=8))
    assert said and "packed BT" in said.text()
    assert [e.params["CACHE_B"] for e in db.entries] == [1]
    assert not db.record(_tiled(30.0, reads_b_only=True, TSM=64))     # reads B, and is faster
    db.save()
    other = load(DEV, path)                                 # a merge over one that packs B
    other.entries = []
    other.record(_tiled(45.0, reads_b_only=True, TSM=64))
    on_disk = load(DEV, path)
    on_disk.entries = [_tiled(60.0, **packs)]
    on_disk.save()
    other.save()
    assert [e.gflops for e in load(DEV, path).entries] == [45.0]


def test_panels_measured_without_their_pack_give_way_to_a_tune_that_counted_it(tmp_path):
    """A stored panels configuration whose speed is its kernel's alone (no `PACK_COUNTED`)
    gives way to a slower entry of a tune that counted the pack gemm() runs before every call
    of panels, on record and on a merge; panels measured with their pack keep their slot
    against a slower one, and panels measured without it (an older database merged in)
    displace nothing that a counting tune stored, however fast."""
    counted = {PACK_COUNTED: True}
    panels = {"CACHE_A": 0, "CACHE_B": 0, "PANELS": 1, "TSM": 16, "TSN": 16, "WPTM": 16,
              "WPTN": 16, "VWM": 16}
    packing = dict(TILED.forms["self-packing"])
    db = load(DEV, tmp_path / "db.json")
    assert db.record(_tiled(1100.0, **panels))
    assert not db.record(_tiled(900.0, **packing))                    # unflagged: kept out
    self_packing = _tiled(900.0, **packing)
    self_packing.provenance = {**self_packing.provenance, **counted}
    said = db.record(self_packing)
    assert said and "left out the pack" in said.text()
    assert [e.params["PACK_K"] for e in db.entries] == [4]
    again = _tiled(850.0, **panels)
    again.provenance = {**again.provenance, **counted}
    assert not db.record(again)                                        # counted, and slower
    said = db.record(_tiled(1200.0, **panels))
    assert not said and "leaves out the pack" in said.text()
    db.save()
    older = load(DEV, tmp_path / "db.json")
    older.entries = [_tiled(1200.0, **panels)]
    older.save()
    assert [e.params["PACK_K"] for e in load(DEV, tmp_path / "db.json").entries] == [4]
    fresh = load(DEV, tmp_path / "other.json")
    fresh.entries = [_tiled(1200.0, **panels)]
    fresh.save()
    fresh = load(DEV, tmp_path / "other.json")
    fresh.entries = [self_packing]
    fresh.save()
    assert [e.params["PACK_K"] for e in load(DEV, tmp_path / "other.json").entries] == [4]


def test_a_reader_measured_on_a_packed_bt_gives_way_to_one_measured_reading_b(tmp_path):
    """A stored configuration that reads B, measured behind the transpose of B (a helper's
    time stored, no `READS_B_ONLY` in its provenance), gives way to a slower entry of a tune
    among readers: its stored speed is of a launch gemm() no longer runs there. One measured
    with no helper before it read B already and keeps its slot, flag or not, as does one
    measured among readers."""
    db = load(DEV, tmp_path / "db.json")
    stale = _tiled(50.0, TSK=8)
    stale.helper_ms = 0.016                            # measured behind the transpose of B
    assert db.record(stale)
    said = db.record(_tiled(45.0, reads_b_only=True, TSK=16))
    assert said and "packed BT" in said.text()
    assert [e.gflops for e in db.entries] == [45.0]
    assert not db.record(_tiled(44.0, reads_b_only=True, TSK=32))
    assert [e.gflops for e in db.entries] == [45.0]
    other = load(DEV, tmp_path / "other.json")
    assert other.record(_tiled(50.0, TSK=8))           # read B with no helper, unflagged
    assert not other.record(_tiled(45.0, reads_b_only=True, TSK=16))
    assert [e.gflops for e in other.entries] == [50.0]


def test_atomic_write_and_merge(tmp_path):
    path = tmp_path / "db.json"
    first, second = load(DEV, path), load(DEV, path)
    first.record(_entry(rung=3))
    first.save()
    second.record(_entry(rung=4, TS=32, WIDTH=4))
    second.save()  # merges with what `first` wrote instead of overwriting it
    assert sorted(e.rung for e in load(DEV, path).entries) == [3, 4]
    # No temporary file left behind; the lock file stays (removing it could leave two
    # processes each holding the lock of a different file of that name).
    assert sorted(os.listdir(tmp_path)) == ["db.json", "db.json.lock"]


def test_foreign_device_key_refused_by_name(tmp_path):
    path = tmp_path / "db.json"
    db = load(DEV, path)
    db.record(_entry())
    db.save()
    other = SimpleNamespace(key="opencl-acme-gpu-2.0", backend="opencl")
    with pytest.raises(UsageError, match="belongs to device 'opencl-acme-gpu-1.0', not "
                                         "'opencl-acme-gpu-2.0'"):
        load(other, path)
    path.write_text("{not json")
    with pytest.raises(UsageError, match="cannot be read"):
        load(DEV, path)


def test_default_path_follows_results_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    assert database_path(DEV.key) == tmp_path / f"{DEV.key}.json"


def test_only_usable_entries(tmp_path):
    path = tmp_path / "db.json"
    db = load(DEV, path)
    db.record(_entry(rung=3, shape=(64, 64, 64), TS=16, WPT=4))
    db.record(_entry(rung=2, shape=(64, 64, 64), TS=16, WIDE=1))  # names no longer match
    db.save()
    assert _usable(path, 3, (64, 64, 64)) == [{"TS": 16, "WPT": 4}]
    assert _usable(path, 2, (64, 64, 64)) == []
    assert _usable(path, 3, (40, 40, 40)) == []  # TS=16 cannot do 40


def _ladder(env, device, *args):
    """`clgemm ladder` on the test's device, named by its index: on a machine whose first device
    is another (NVIDIA's OpenCL before the CUDA device under test) the ladder would read
    another device's database."""
    return subprocess.run([sys.executable, "-m", "clgemm", "ladder", "--device", str(device.index),
                           "--size", "64", "--repeats", "1", "--warmup", "0", *args],
                          capture_output=True, text=True, timeout=300, env=env)


def _row(stdout: str, rung: int) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(f"{rung} "))


def test_ladder_uses_tuned_parameters(device, tmp_path, no_shipped_tuning):
    db = load(device, database_path(device.key, tmp_path))
    db.record(Entry(rung=3, shape=[64, 64, 64], backend=device.backend,
                    params={"TS": 16, "WPT": 4}, ms=1.0, gflops=1.0))
    db.save()
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = _ladder(env, device, "--rungs", "2,3")
    assert r.returncode == 0, r.stderr
    assert "TS=16 WPT=4" in _row(r.stdout, 3) and "tuned" in _row(r.stdout, 3)
    assert "default" in _row(r.stdout, 2)
    d = _ladder(env, device, "--rungs", "3", "--defaults", "--wide")  # every parameter too
    assert "TS=32 WPT=8" in _row(d.stdout, 3) and "default" in _row(d.stdout, 3)
    u = _ladder(env, device, "--rungs", "3", "--param", "WPT=2")  # user values on top of tuned ones
    assert "TS=16 WPT=2" in _row(u.stdout, 3) and "user" in _row(u.stdout, 3)


# -- concurrent saves ----------------------------------------------------------------------

SAVES = 20


def _save_many(path: str, worker: int, start) -> None:
    """One process's saves: each its own (rung, shape) slot, loaded and saved afresh so that
    every save reads, merges and replaces the file while the others do the same."""
    start.wait()
    for i in range(SAVES):
        db = load(DEV, path)
        db.record(_entry(rung=worker + 1, shape=(64 + i,) * 3))
        db.save()


@pytest.mark.parametrize("through", ["one path", "two links"])
def test_concurrent_saves_lose_nothing(tmp_path, through):
    """Four processes saving one file at once keep every entry, also when they reach it
    through two different symbolic links (the lock is the file's, not the link's)."""
    path = tmp_path / "db.json"
    paths = [path] * 4
    if through == "two links":
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        (tmp_path / "a" / "db.json").symlink_to(path)
        (tmp_path / "b" / "link.json").symlink_to(Path("..") / "db.json")
        paths = [tmp_path / "a" / "db.json", tmp_path / "b" / "link.json"] * 2
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(4)
    procs = [ctx.Process(target=_save_many, args=(str(paths[w]), w, start)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * 4
    slots = {(e.rung, e.shape[0]) for e in load(DEV, path).entries}
    assert slots == {(w + 1, 64 + i) for w in range(4) for i in range(SAVES)}
    assert all(p.is_symlink() for p in paths if p != path)
    assert sorted(p.name for p in tmp_path.glob("*.lock")) == ["db.json.lock"]


# -- entries that cannot be used ---------------------------------------------------------------

GOOD = {"rung": 3, "shape": [64, 64, 64], "backend": "opencl", "params": {"TS": 16, "WPT": 4},
        "ms": 1.0, "gflops": 1.0}
BAD = [  # (what is wrong, the reason the warning gives)
    ({"shape": [0, 64, 64]}, "shape [0, 64, 64] is not three positive integers"),
    ({"shape": [64, 64]}, "shape [64, 64] is not three positive integers"),
    ({"gflops": None}, "gflops None is not a positive number"),
    ({"gflops": float("nan")}, "gflops nan is not a positive number"),
    ({"ms": "1.0"}, "ms '1.0' is not a positive number"),
    ({"rung": "3"}, "rung '3' is not an integer"),
    ({"rung": True}, "rung True is not an integer"),
    ({"backend": 1}, "backend 1 is not a string"),
    ({"params": [16, 4]}, "parameters [16, 4] are not a mapping of names to integers"),
    ({"params": {"TS": 32.9, "WPT": 4}}, "parameter TS=32.9 is not an integer"),
    ({"params": {"TS": 16, "X -DWPT=4": 1}}, "parameter name 'X -DWPT=4' is not a macro name"),
    ({"times_ms": [1.0, "x"]}, "times_ms [1.0, 'x'] is not a list of numbers"),
    ({"repeats": -1}, "repeats -1 is not a non-negative integer"),
    ({"provenance": "tuned"}, "provenance 'tuned' is not an object"),
    ({"ms": None, "gflops": None, "params": None},  # the first reason is named
     "parameters None are not a mapping of names to integers"),
]


def _write_db(path, entries) -> None:
    path.write_text(json.dumps({"format": "clgemm-tuning-database", "version": 1,
                                "device": DEV.key, "backend": "opencl", "entries": entries}))


@pytest.mark.parametrize("change,why", BAD, ids=[",".join(c) for c, _ in BAD])
def test_invalid_entry_skipped_once_warned_and_kept(tmp_path, change, why):
    path = tmp_path / "db.json"
    bad = {**GOOD, "shape": [128, 128, 128], "gflops": 99.0, **change}
    _write_db(path, [GOOD, bad])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        db = load(DEV, path)
        assert [e.to_json()["params"] for e in db.entries] == [GOOD["params"]]
        assert _usable(path, 3, (128, 128, 128)) == [GOOD["params"]]
        db.record(_entry(rung=4, TS=32, WIDTH=4))
        db.save()
    assert [str(w.message) for w in caught] == [  # once per file, not once per lookup
        f"clgemm: database {path}: 1 invalid entry skipped (kept in the file); entry 2: {why}"]
    assert all(w.category is RuntimeWarning for w in caught)
    kept = json.loads(path.read_text())["entries"]
    assert len(kept) == 3 and kept[-1] == json.loads(json.dumps(bad).replace("NaN", "null"))


def test_invalid_entry_not_recorded(tmp_path):
    db = load(DEV, tmp_path / "db.json")
    with pytest.raises(UsageError, match="refusing to record an entry whose gflops nan is not"):
        db.record(_entry(gflops=float("nan")))
    with pytest.raises(UsageError, match="whose parameter TS=16.5 is not an integer"):
        db.record(_entry(TS=16.5, WPT=4))
    assert db.entries == []


def test_entries_not_a_list_refused(tmp_path):
    path = tmp_path / "db.json"
    _write_db(path, {"rung": 3})
    with pytest.raises(UsageError, match=r"database .*db\.json: 'entries' is not a list"):
        load(DEV, path)


def test_ladder_skips_invalid_entries(device, tmp_path, no_shipped_tuning):
    path = database_path(device.key, tmp_path)
    good = {**GOOD, "backend": device.backend, "params": {"TS": 16, "WPT": 2}}
    _write_db_for(path, device, [good, {**good, "shape": [0, 64, 64]},
                                 {**good, "gflops": None}, {**good, "params": {"TS": 32.9}}])
    r = _ladder({**os.environ, "CLGEMM_RESULTS": str(tmp_path)}, device, "--rungs", "3")
    assert r.returncode == 0, r.stderr
    assert "TS=16 WPT=2" in _row(r.stdout, 3) and "tuned" in _row(r.stdout, 3)
    assert r.stderr.count("3 invalid entries skipped") == 1


def _write_db_for(path, device, entries) -> None:
    path.write_text(json.dumps({"format": "clgemm-tuning-database", "version": 1,
                                "device": device.key, "backend": device.backend,
                                "entries": entries}))


# -- entries the lookup cannot use -------------------------------------------------------------

UNUSABLE = [  # (parameters as stored, what the tune says of them)
    ({"TS": 16, "WPT": 4, "OLDPARAM": 1}, "rung 3 has no parameter OLDPARAM (an earlier "
                                          "parameter set)"),
    ({"TS": -8, "WPT": 4}, "TS=-8 WPT=4 breaks rung 3's 'parameters within their minimum"),
    ({"TS": 10**30, "WPT": 4}, f"TS={10**30} is beyond what a kernel's int holds"),
    ({"TS": 0, "WPT": 4}, "TS=0 WPT=4 "),
    ({"TS": 4096, "WPT": 1}, "TS=4096 WPT=1 breaks rung 3's 'work-group size"),  # this device
]


@pytest.mark.parametrize("params,why", UNUSABLE, ids=[w.split(" ")[0] for _, w in UNUSABLE])
def test_a_measurement_replaces_an_entry_the_lookup_cannot_use(tmp_path, params, why):
    """However fast an unusable entry claims to be, it must not keep every later tune of its
    slot out of the database: a verified measurement replaces it, and says so."""
    path = tmp_path / "db.json"
    blocker = {**GOOD, "params": params, "gflops": 1e6}
    other = {**GOOD, "shape": [128, 128, 128], "params": {"TS": 16, "WPT": 4, "OLDPARAM": 1}}
    _write_db(path, [blocker, other])
    db = load(DEV, path)
    assert _usable(path, 3, (64, 64, 64)) == []  # never used
    said = db.record(_entry(shape=(64, 64, 64), gflops=2.0, TS=16, WPT=2))
    assert said and said.text().startswith(f"stored (replaces an unusable entry: {why}")
    db.save()
    kept = json.loads(path.read_text())["entries"]
    assert [(e["shape"][0], e["params"], e["gflops"]) for e in kept] == [
        (64, {"TS": 16, "WPT": 2}, 2.0), (128, other["params"], 1.0)]  # the other slot kept
    assert _usable(path, 3, (64, 64, 64)) == [{"TS": 16, "WPT": 2}]


def test_an_unusable_entry_never_displaces_a_usable_one(tmp_path):
    """Not when recorded, and not when a save merges it back: a run that loaded the unusable
    entry before another run replaced it must not bring it back."""
    path = tmp_path / "db.json"
    _write_db(path, [{**GOOD, "params": {"TS": 16, "WPT": 4, "OLDPARAM": 1}, "gflops": 1e6}])
    stale_run = load(DEV, path)
    fresh_run = load(DEV, path)
    assert fresh_run.record(_entry(shape=(64, 64, 64), gflops=2.0, TS=16, WPT=2))
    fresh_run.save()
    stale_run.record(_entry(rung=4, TS=32, WIDTH=4))
    stale_run.save()
    kept = json.loads(path.read_text())["entries"]
    assert [(e["rung"], e["params"]) for e in kept] == [(3, {"TS": 16, "WPT": 2}),
                                                       (4, {"TS": 32, "WIDTH": 4})]
    said = load(DEV, path).record(_entry(shape=(64, 64, 64), gflops=9e9, TS=16, WPT=4,
                                         OLDPARAM=1))
    assert not said and said.text() == (
        "not stored: it cannot be used here (rung 3 has no parameter OLDPARAM (an earlier "
        "parameter set)); the stored entry can")


# -- links and failed writes -------------------------------------------------------------------

def test_a_save_through_a_link_keeps_the_link(tmp_path):
    real = tmp_path / "store" / "db.json"
    real.parent.mkdir()
    first = load(DEV, real)
    first.record(_entry())
    first.save()
    link = tmp_path / "mine.json"
    link.symlink_to(real)
    db = load(DEV, link)
    db.record(_entry(rung=4, TS=32, WIDTH=4))
    assert db.save() == link
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sorted(e.rung for e in load(DEV, real).entries) == [3, 4]
    assert sorted(os.listdir(tmp_path)) == ["mine.json", "store"]  # the lock is the file's
    assert sorted(os.listdir(real.parent)) == ["db.json", "db.json.lock"]
    dangling = tmp_path / "later.json"  # a link to a file that does not exist yet
    dangling.symlink_to(tmp_path / "store" / "later-target.json")
    db = load(DEV, dangling)
    db.record(_entry())
    db.save()
    assert dangling.is_symlink() and (real.parent / "later-target.json").is_file()


def _saved(tmp_path) -> tuple[Path, str]:
    path = tmp_path / "db.json"
    db = load(DEV, path)
    db.record(_entry())
    db.save()
    return path, path.read_text()


def _fail_for(call: str, target: str, err: int):
    """os.write or os.replace (`call`), failing with `err` where it writes the database's
    temporary file or renames it over the database, and working for everything else."""
    real = getattr(os, call)

    def failing(*args):
        if call == "write":
            hit = os.path.basename(os.readlink(f"/proc/self/fd/{args[0]}")).startswith(
                f".{target}.")
        else:
            hit = os.path.basename(str(args[1])) == target
        if hit:
            raise OSError(err, os.strerror(err))
        return real(*args)

    return failing


@pytest.mark.parametrize("call", ["write", "replace"])
def test_a_full_disk_leaves_the_old_database_whole(tmp_path, monkeypatch, call):
    if call == "write" and not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to tell the database's writes from others")
    path, before = _saved(tmp_path)
    db = load(DEV, path)
    db.record(_entry(rung=4, TS=32, WIDTH=4))
    monkeypatch.setattr(files.os, call, _fail_for(call, "db.json", errno.ENOSPC))
    with pytest.raises(FileWriteError) as caught:
        db.save()
    monkeypatch.undo()
    message = str(caught.value)
    assert message == f"cannot write database {path}: No space left on device"
    assert isinstance(caught.value, ClgemmError) and caught.value.exit_code == 1
    assert path.read_text() == before                                      # intact
    assert sorted(os.listdir(tmp_path)) == ["db.json", "db.json.lock"]    # no temporary file


def test_a_folder_where_the_lock_goes_is_one_error(tmp_path):
    path, before = _saved(tmp_path)
    (tmp_path / "db.json.lock").unlink()
    (tmp_path / "db.json.lock").mkdir()
    db = load(DEV, path)
    db.record(_entry(rung=4, TS=32, WIDTH=4))
    with pytest.raises(FileWriteError, match=rf"cannot lock {path}: .*db\.json\.lock is a "
                                             rf"folder, not a lock file"):
        db.save()
    assert path.read_text() == before
    blocked = load(DEV, tmp_path / "a-file" / "db.json")  # its folder cannot be made
    (tmp_path / "a-file").write_text("")
    blocked.record(_entry())
    with pytest.raises(FileWriteError, match=r"cannot write database .*a-file/db\.json: "):
        blocked.save()
