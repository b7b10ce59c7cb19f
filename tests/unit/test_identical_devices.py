"""Identical devices tuned at once (`tune --device all` on a machine with two GPUs of one
model): they have one database and one set of journals, so they share the run's steps, each
step measured once, instead of one failing on journals the other holds."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clgemm.tuner.plan import TuneStep, share_of
from clgemm.tuner.tune_run import identical_shares

UNIT = Path(__file__).parent


def _steps(*seconds: float) -> list[TuneStep]:
    return [TuneStep(12, (64 * (i + 1),) * 3, s) for i, s in enumerate(seconds)]


@pytest.mark.parametrize("parts", [1, 2, 3, 5])
def test_the_parts_hold_every_step_once_in_the_run_order(parts):
    steps = _steps(45, 3.5, 3.5, 40, 30, 17, 17, 25, 3.5, 10)
    shared = [share_of(steps, part, parts) for part in range(parts)]
    assert sorted(i for part in shared for i in map(steps.index, part)) == list(range(len(steps)))
    for part in shared:
        assert [steps.index(s) for s in part] == sorted(steps.index(s) for s in part)
    loads = [sum(s.seconds for s in part) for part in shared]
    assert max(loads) - min(loads) <= max(s.seconds for s in steps)


def test_more_devices_than_steps_leaves_some_without_any():
    steps = _steps(30)
    assert share_of(steps, 0, 2) == steps and share_of(steps, 1, 2) == []


def test_steps_of_no_seconds_are_shared_by_count():
    steps = _steps(0, 0, 0, 0, 0)
    assert [len(share_of(steps, part, 2)) for part in range(2)] == [3, 2]


def test_only_devices_with_a_twin_share():
    from numpy_backend import discover
    gpu = dataclasses.replace(discover()[0], index=0)
    twin = dataclasses.replace(gpu, index=1, handle=1)
    other = dataclasses.replace(gpu, index=2, name="another GPU")
    assert identical_shares([gpu, other, twin]) == {0: (0, 2), 1: (1, 2)}
    assert identical_shares([gpu, other]) == {}


def test_two_identical_devices_tune_one_database_between_them(tmp_path):
    """Two emulated GPUs of one model: both runs end well, into one database, and the four
    steps (two rungs at two shapes) are measured once each, two by each device."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path), "CLGEMM_BACKENDS": "numpy_backend",
           "CLGEMM_TEST_DEVICES": "2",
           "PYTHONPATH": os.pathsep.join([str(UNIT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--device", "all", "--backend",
                        "numpy-test", "--rungs", "2,3", "--shapes", "64,128", "--budget", "2",
                        "--confirm", "1", "--jobs", "0", "--json", "-"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    devices = json.loads(r.stdout)["devices"]
    assert len(devices) == 2 and len({d["database"] for d in devices}) == 1
    journals = [set(d["journals"]) for d in devices]
    assert all(len(j) == 2 for j in journals) and not journals[0] & journals[1]
    stored = json.loads(Path(devices[0]["database"]).read_text())["entries"]
    assert sorted((e["rung"], tuple(e["shape"])) for e in stored) == [
        (2, (64, 64, 64)), (2, (128, 128, 128)), (3, (64, 64, 64)), (3, (128, 128, 128))]
