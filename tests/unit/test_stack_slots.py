"""Stack slots: an entry measured on a stack of products (`batch`) is stored, checked and chosen
apart from one measured on a single product. Databases in a temporary folder, a made-up device;
nothing runs a kernel."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from made_up import GPU

from clgemm.configs import choice, lookup
from clgemm.configs.database import Entry, database_path, load, read_any
from clgemm.core.errors import UsageError
from clgemm.core.paths import TUNING
from clgemm.devices.info import DeviceInfo
from clgemm.library import gemm as api
from clgemm.library.stack_launch import stack_kernel
from clgemm.rungs.direct import DIRECT

#: the made-up GPU under another driver: a level of the chain below its own tuning
OTHER_DRIVER = dataclasses.replace(GPU, driver_version="2")
SMALL = (64, 64, 64)
#: one 64 x 64 tile per 64 cubed product: what suits a stack of them
BIG_TILE = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4}
#: sixteen tiles per product: what fills more of the device with a single one
SMALL_TILE = {"TSM": 16, "TSN": 16, "TSK": 16, "WPTM": 1, "WPTN": 1}
MEDIUM_TILE = {"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 2, "WPTN": 2}


def _entry(params: dict[str, int], gflops: float, shape: tuple[int, ...] = SMALL,
           batch: Any = 1) -> Entry:
    return Entry(DIRECT.number, list(shape), "opencl", dict(params), 1.0, gflops, batch=batch)


def _store(root: Path, entries: list[Entry], device: DeviceInfo = GPU) -> None:
    db = load(device, database_path(device.key, root))
    db.entries = list(entries)
    db.save()
    lookup.forget()


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    api.clear_caches()
    yield
    api.clear_caches()


# -- the database --------------------------------------------------------------------------------

def test_a_stack_entry_round_trips(tmp_path):
    path = tmp_path / "db.json"
    db = load(GPU, path)
    assert db.record(_entry(BIG_TILE, 900.0, batch=1000))
    db.save()
    again = load(GPU, path)
    assert [(e.batch, e.params["TSM"]) for e in again.entries] == [(1000, 64)]
    stored = json.loads(path.read_text())["entries"][0]
    assert stored["batch"] == 1000
    assert list(stored)[:3] == ["rung", "shape", "batch"]  # read beside the shape it multiplies


def test_a_single_product_entry_is_written_without_a_batch():
    assert "batch" not in _entry(BIG_TILE, 900.0).to_json()
    assert _entry(BIG_TILE, 900.0, batch=2).to_json()["batch"] == 2


def test_every_shipped_database_writes_back_unchanged():
    """A save of a shipped database (as `--database` makes) gives the bytes it read, those
    holding a stack's entry among them."""
    paths = sorted(TUNING.glob("*.json"))
    assert paths
    for path in paths:
        db = read_any(path)
        assert not db.invalid, path.name
        text = json.dumps(db.to_json(), indent=1, allow_nan=False) + "\n"
        assert text == path.read_text(), path.name


BAD_BATCHES = [0, -1, 1.5, True, "3"]


@pytest.mark.parametrize("bad", BAD_BATCHES, ids=repr)
def test_a_bad_batch_is_set_apart_and_refused(tmp_path, bad):
    path = tmp_path / "db.json"
    good = _entry(SMALL_TILE, 100.0).to_json()
    wrong = {**good, "shape": [128, 128, 128], "batch": bad}
    path.write_text(json.dumps({"format": "clgemm-tuning-database", "version": 2,
                                "device": GPU.key, "backend": "opencl",
                                "entries": [good, wrong]}))
    with pytest.warns(RuntimeWarning, match=rf"entry 2: batch {bad!r} is not a positive "
                                            rf"integer"):
        db = load(GPU, path)
    assert [e.shape for e in db.entries] == [[64, 64, 64]] and db.invalid == [wrong]
    db.save()
    assert json.loads(path.read_text())["entries"][-1] == wrong  # kept for repair
    with pytest.raises(UsageError, match=rf"whose batch {bad!r} is not a positive integer"):
        db.record(_entry(SMALL_TILE, 100.0, batch=bad))


def test_a_stack_and_a_single_product_are_two_slots(tmp_path):
    one = _entry(SMALL_TILE, 100.0)
    stack = _entry(BIG_TILE, 900.0, batch=1000)
    assert not one.same_slot(stack)
    assert stack.same_slot(_entry(SMALL_TILE, 1.0, batch=1000))
    assert not stack.same_slot(_entry(BIG_TILE, 900.0, batch=10))
    db = load(GPU, tmp_path / "db.json")
    said = [db.record(one), db.record(stack), db.record(_entry(MEDIUM_TILE, 50.0, batch=1000))]
    assert [r.text() for r in said] == [
        "stored (the first at this slot)", "stored (the first at this slot)",
        "not stored: 900.0 GFLOP/s stored at this slot is faster"]
    assert sorted(e.batch for e in db.entries) == [1, 1000]


# -- the lookup ----------------------------------------------------------------------------------

def test_a_product_lookup_never_sees_a_stack_entry(tmp_path):
    _store(tmp_path, [_entry(BIG_TILE, 1e6, batch=1000)])
    assert lookup.best(GPU, DIRECT, SMALL, [tmp_path]) is None
    assert lookup.candidates(GPU, DIRECT, SMALL, [tmp_path]) == []
    _store(tmp_path, [_entry(BIG_TILE, 1e6, batch=1000), _entry(SMALL_TILE, 10.0)])
    found = lookup.best(GPU, DIRECT, SMALL, [tmp_path])
    assert (found.params["TSM"], found.batch) == (16, 1)


def test_a_stack_lookup_prefers_a_stack_entry(tmp_path):
    """At the very product shape, a single product's entry faster than the stack's still does
    not answer for a stack; where no stack was measured, the single product's choice does."""
    _store(tmp_path, [_entry(SMALL_TILE, 5000.0)])
    alone = lookup.best(GPU, DIRECT, SMALL, [tmp_path])
    assert lookup.best(GPU, DIRECT, SMALL, [tmp_path], batch=1000) == alone
    assert lookup.ranked(GPU, DIRECT, SMALL, [tmp_path], batch=1000) == \
        lookup.ranked(GPU, DIRECT, SMALL, [tmp_path])
    _store(tmp_path, [_entry(SMALL_TILE, 5000.0), _entry(BIG_TILE, 900.0, batch=1000)])
    found = lookup.best(GPU, DIRECT, SMALL, [tmp_path], batch=1000)
    assert (found.params["TSM"], found.batch) == (64, 1000)
    assert lookup.best(GPU, DIRECT, SMALL, [tmp_path]) == alone


def test_a_stack_lookup_takes_the_nearest_batch(tmp_path):
    _store(tmp_path, [_entry(BIG_TILE, 900.0, batch=1000), _entry(MEDIUM_TILE, 900.0, batch=10)])
    assert lookup.best(GPU, DIRECT, SMALL, [tmp_path], batch=2000).batch == 1000
    assert lookup.best(GPU, DIRECT, SMALL, [tmp_path], batch=20).batch == 10


def test_an_own_stack_measurement_outranks_only_its_own_slot(tmp_path):
    """The device's own stack of 1000 hides another driver's stack of 1000 at that shape,
    however fast; its own stack of 10 hides nothing of the other's stack of 1000."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    _store(other, [_entry(BIG_TILE, 9000.0, batch=1000)], OTHER_DRIVER)
    _store(mine, [_entry(MEDIUM_TILE, 100.0, batch=10)])
    roots = [mine, other]
    found = lookup.best(GPU, DIRECT, SMALL, roots, batch=1000)
    assert (found.level, found.batch) == ("driver", 1000)
    _store(mine, [_entry(MEDIUM_TILE, 100.0, batch=1000)])
    found = lookup.best(GPU, DIRECT, SMALL, roots, batch=1000)
    assert (found.level, found.params["TSM"]) == ("tuned", 32)


def test_gemm_stacks_look_up_their_count(tmp_path, monkeypatch):
    """The direct kernel's configuration for a stack (`direct_config`, and `stack_kernel` as
    gemm() asks it, remembered per count) is the stack's entry; for one product, the
    product's."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "0")
    _store(tmp_path, [_entry(SMALL_TILE, 5000.0), _entry(BIG_TILE, 900.0, batch=1000)])
    api.clear_caches()
    assert choice.direct_config(GPU, SMALL)[0].params["TSM"] == 16
    assert choice.direct_config(GPU, SMALL, batch=1000)[0].params["TSM"] == 64
    be = SimpleNamespace(device=GPU)
    assert stack_kernel(be, *SMALL).params["TSM"] == 16
    assert stack_kernel(be, *SMALL, 1000).params["TSM"] == 64
    assert stack_kernel(be, *SMALL, 3).params["TSM"] == 64  # a stack's entry, at any count
