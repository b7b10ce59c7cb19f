"""A configuration borrowed from another device is tried in a child process before the ladder or
verify runs it here: a crash there is reported, and the caller lives on.

The crash is real: a made-up kernel that writes through a null pointer (`test_tuner_eval`'s,
whose MODE 5 kills the process that launches it), which the child finds by its module name.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from clgemm.cli import main
from clgemm.configs import lookup
from clgemm.configs import trial_record
from clgemm.configs.configuration import Config, configure
from clgemm.configs.database import Entry, database_path, device_meta, load
from clgemm.configs import database
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.bench import run_bench
from clgemm.measure import verify
from clgemm.rungs import get_rung
from clgemm.tuner import first_launch
from test_tuner_eval import FAKE, REF

#: the ladder command's module (`clgemm.cli.ladder` as an attribute is the command itself)
LADDER_COMMAND = sys.modules["clgemm.cli.ladder"]


def test_labels_below_the_device_are_borrowed_and_its_own_are_not():
    who = lookup.StoredDevice("k", "opencl", "Other CPU", "Someone", "CPU", "1.0", "fam")

    class Here:
        backend, key, name, vendor, type, family = "opencl", "h", "This CPU", "Me", "CPU", "x"

    here = Here()
    labels = {}
    for changes, level in (({"key": "h"}, "tuned"), ({"name": "This CPU", "vendor": "Me"},
                                                     "driver"),
                           ({"family": "x"}, "family"), ({}, "type")):
        found = lookup.device_level(here, dataclasses.replace(who, **changes))
        assert found is not None and lookup.LEVELS[found[0]] == level
        labels[level] = found[1]
    assert not lookup.borrowed(labels["tuned"])
    assert all(lookup.borrowed(labels[level]) for level in ("driver", "family", "type"))
    assert not any(lookup.borrowed(label) for label in ("default", "user", "form: stack"))


def _fake(mode: int, source: str) -> Config:
    return Config(FAKE.number, {"MODE": mode, "TS": 8}, source)


def test_a_borrowed_configuration_that_crashes_its_trial_is_named_and_this_process_lives(
        device, tmp_path, monkeypatch):
    """MODE 5 writes through a null pointer at its first launch (a CPU's runtime dies of it, a
    GPU's reports a failed launch), MODE 3 is wrong, MODE 1 is right: only the borrowed
    failures come back, each with why; the configurations not borrowed are not tried."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))  # where the failures are recorded
    said: list[str] = []
    failures = first_launch.trial_failures(
        device, [_fake(1, "family: Other"), _fake(5, "default: CPU"), _fake(3, "tuned (driver "
                                                                              "9)"),
                 _fake(2, "default"), _fake(2, "user")],
        said.append, ref_of=lambda config: REF)
    assert set(failures) == {_fake(5, "").key, _fake(3, "").key}
    assert failures[_fake(5, "").key].startswith(
        ("crashed: worker died during launch (signal", "launch-failed: "))
    assert failures[_fake(3, "").key].startswith("wrong: ")
    assert len(said) == 3 and all("child process" in line for line in said)


def test_nothing_borrowed_starts_no_child(device, monkeypatch):
    def no_child(*args, **kwargs):
        raise AssertionError("a child process was started")

    monkeypatch.setattr(first_launch, "Evaluator", no_child)
    assert first_launch.trial_failures(device, [Config(2, get_rung(2).defaults(), "tuned"),
                                                Config(2, get_rung(2).defaults())]) == {}


@pytest.fixture
def borrowed_rung_2(device, tmp_path, monkeypatch):
    """A database of another device of this one's type holding rung 2 with TS=8, the only
    database read (here and in child processes): the ladder's rung 2 runs it as `default: CPU`
    (or GPU)."""
    results = tmp_path / "results"
    results.mkdir()
    monkeypatch.setenv("CLGEMM_RESULTS", str(results))
    monkeypatch.setenv(database.SHIPPED_SWITCH, "0")
    other = dataclasses.replace(device, name="Made-up " + device.type, vendor="Nobody",
                                driver_version="0.0", compute_capability="")
    params = get_rung(2).resolve({"TS": 8})
    db = load(other, database_path(other.key, results))
    db.entries = [Entry(2, [64] * 3, device.backend, dict(params), 1.0, 1.0)]
    db.meta = device_meta(other)
    db.save()
    lookup.forget()
    api.clear_caches()
    yield Config(2, params, f"default: {device.type}")
    lookup.forget()
    api.clear_caches()


def _ladder(device, tmp_path, capsys) -> tuple[dict, str]:
    out = tmp_path / "ladder.json"
    assert main(["ladder", "--device", str(device.index), "--size", "64", "--rungs", "1-2",
                 "--repeats", "1", "--warmup", "0", "--json", str(out)]) == 0
    return json.loads(out.read_text()), capsys.readouterr().err


def test_the_ladder_runs_a_borrowed_configuration_that_survived_its_trial(
        device, borrowed_rung_2, tmp_path, capsys, monkeypatch):
    tried: list[list[Config]] = []

    def spy(dev, configs, progress=None):
        tried.append(list(configs))
        return first_launch.trial_failures(dev, tried[-1], progress)

    monkeypatch.setattr(LADDER_COMMAND, "trial_failures", spy)
    data, _ = _ladder(device, tmp_path, capsys)
    assert [c.key for c in tried[0] if c.borrowed] == [borrowed_rung_2.key]
    row = data["rows"][1]
    assert row["params_source"] == borrowed_rung_2.source and row["status"] == "ok"
    assert row["params"] == dict(borrowed_rung_2.params)
    assert data["trial_failures"] == {}


def test_the_ladder_climbs_past_a_borrowed_configuration_that_failed_its_trial(
        device, borrowed_rung_2, tmp_path, capsys, monkeypatch):
    """The rung runs its defaults, and a line under the table says what failed and why."""
    monkeypatch.setattr(LADDER_COMMAND, "trial_failures", lambda dev, configs, progress=None: {
        borrowed_rung_2.key: "crashed: worker died during launch (signal 11)"})
    data, err = _ladder(device, tmp_path, capsys)
    row = data["rows"][1]
    assert row["params_source"] == "default" and row["status"] == "ok"
    assert row["params"] == get_rung(2).defaults()
    assert data["trial_failures"] == {"2": "crashed: worker died during launch (signal 11)"}
    said = " ".join(err.split())
    assert (f"rung 2: the configuration of {borrowed_rung_2.source} (TS=8) failed its trial "
            f"launch here (crashed: worker died during launch (signal 11)); the rung ran its "
            f"defaults") in said


def test_verify_fails_the_group_of_a_configuration_that_failed_its_trial(
        device, borrowed_rung_2, capsys):
    """The group's cases fail with the trial's reason, none of them run in this process; the
    other groups run as before."""
    def trial(configs):
        assert borrowed_rung_2.key in [c.key for c in configs if c.borrowed]
        return {borrowed_rung_2.key: "crashed: worker died during launch (signal 11)"}

    report = verify.run_verify(device, [2], quick=True, trial=trial)
    groups = [g for g in report.groups if g.rung == 2 and g.path == "buffers"]
    failed = [g for g in groups if g.source == borrowed_rung_2.source]
    assert len(failed) == 1 and failed[0].results
    assert all(not r.ok and "failed a trial launch in a child process (crashed" in r.message
               for r in failed[0].results)
    assert all(r.ok for g in groups if g is not failed[0] for r in g.results)


def test_the_bench_leaves_out_a_borrowed_configuration_that_failed_its_trial(
        device, borrowed_rung_2):
    def trial(configs):
        return {c.key: "crashed: worker died during launch (signal 11)" for c in configs
                if c.key == borrowed_rung_2.key}

    run = run_bench(device, [Problem(64, 64, 64)], [1, 2], repeats=1, warmup=0, trial=trial)
    rows = {r["rung"]: r for r in run.rows[0]["rungs"]}
    assert rows[2]["status"] == "trial-failed" and "(crashed: worker died" in rows[2]["message"]
    assert rows[2]["source"] == borrowed_rung_2.source and rows[1]["status"] == "ok"
    assert "rung 2 trial-failed" in run.table()


def test_trials_try_a_configuration_once_a_run(device, monkeypatch):
    asked: list[list] = []

    def counted(dev, configs, progress=None):
        asked.append([c.key for c in configs])
        return {c.key: "wrong: off" for c in configs if c.params["TS"] == 16}

    monkeypatch.setattr(first_launch, "trial_failures", counted)
    trials = first_launch.Trials(device)
    two = [Config(2, get_rung(2).resolve({"TS": ts}), "family: Other") for ts in (8, 16)]
    assert trials(two) == {two[1].key: "wrong: off"}
    assert trials(two + [Config(2, get_rung(2).resolve({"TS": 4}), "tuned")]) == {
        two[1].key: "wrong: off"}
    assert asked == [[c.key for c in two], []]


class _FailingEvaluator:
    """Stands in for the measuring process: every configuration's launch crashes."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def retarget(self, problem):
        pass

    def evaluate(self, ref, params):
        return {"status": "crashed", "message": "worker died during launch (signal 11)"}


def test_a_failed_trial_is_recorded_and_the_lookup_never_offers_it_again(
        device, borrowed_rung_2, monkeypatch):
    """gemm() tries a stored configuration in its own process, so a crash there would take the
    caller along: once a trial saw the borrowed configuration fail, the chain leaves it out
    for this device (rung 2 falls back to its defaults), in this process and any other."""
    shape = (64, 64, 64)
    assert configure(device, 2, shape).key == borrowed_rung_2.key
    assert _source_in_a_new_process(device) == borrowed_rung_2.source
    monkeypatch.setattr(first_launch, "Evaluator", _FailingEvaluator)
    assert set(first_launch.trial_failures(device, [borrowed_rung_2])) == {borrowed_rung_2.key}
    recorded = trial_record.failed(device.key)
    assert recorded == {borrowed_rung_2.key: "crashed: worker died during launch (signal 11)"}
    lookup.forget()
    again = configure(device, 2, shape)
    assert again.source == "default" and again.params == get_rung(2).defaults()
    assert _source_in_a_new_process(device) == "default"


def _source_in_a_new_process(device) -> str:
    """Where a fresh process's rung 2 at 64 cubed takes its configuration from."""
    code = ("import sys; from clgemm.configs.configuration import configure; "
            "from clgemm.library import gemm as api; d = api.backend_for(sys.argv[1]).device; "
            "print(configure(d, 2, (64, 64, 64)).source)")
    r = subprocess.run([sys.executable, "-c", code, str(device.index)], capture_output=True,
                       text=True, env={**os.environ}, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_record_keeps_what_others_wrote_and_ignores_what_it_cannot_trust(tmp_path):
    key_a = trial_record.key_of(2, {"TS": 8})
    key_b = trial_record.key_of(3, {"TS": 16, "WPT": 4})
    trial_record.record("dev", {key_a: "crashed: a"}, tmp_path)
    trial_record.record("dev", {key_b: "wrong: b", key_a: "crashed: again"}, tmp_path)
    assert trial_record.failed("dev", tmp_path) == {key_a: "crashed: a", key_b: "wrong: b"}
    path = trial_record.record_path("dev", tmp_path)
    data = json.loads(path.read_text())
    data["entries"] += [{**data["entries"][0], "clgemm": "0.0.0-other"},  # another version's
                        {**data["entries"][0], "rung": 999},  # no such kernel
                        {**data["entries"][0], "params": {"TS": "8"}}]  # not an integer
    path.write_text(json.dumps(data))
    assert trial_record.failed("dev", tmp_path) == {key_a: "crashed: a", key_b: "wrong: b"}
    path.write_text("{ not json")
    with pytest.warns(RuntimeWarning, match="trial record .* ignored"):
        assert trial_record.failed("dev", tmp_path) == {}
    trial_record.record("dev", {key_b: "wrong: b"}, tmp_path)  # an unreadable file is replaced
    assert trial_record.failed("dev", tmp_path) == {key_b: "wrong: b"}
