"""Records that lack something their type promises (an ok row without a time, a plot without its
rung, a stored shape that is not three integers, a setting cleared after construction): each is
handled by a check of its own, never by an arithmetic or lookup error further on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.course.data import load_results
from clgemm.course.plots import PlotSpec
from clgemm.devices.info import DeviceInfo
from clgemm.measure.ladder import LadderRun, default_repeats
from clgemm.measure.rung_runner import RunResult
from clgemm.tuner import tune_run as tuner_run
from clgemm.tuner.plan import TuneStep
from clgemm.tuner.rung_tune import TuneOptions

CPU = DeviceInfo(0, "opencl", "Test Platform", "Test CPU", "CPU", "Test", 2, 2000, 2**33,
                 2**16, 1024, (1024, 1024, 1024), 2**31, "1.0", "OpenCL 3.0")


def _ladder(rows: list[RunResult]) -> LadderRun:
    return LadderRun(CPU, Problem(64, 64, 64), rows, [], {}, "test")


def test_speedups_skip_an_ok_row_without_a_time():
    rows = [RunResult(1, "naive", {"TS": 16}, "ok", ms=4.0),
            RunResult(2, "tiling", {"TS": 16}, "ok"),             # ok, but never timed
            RunResult(3, "more work", {"TS": 32, "WPT": 4}, "ok", ms=2.0)]
    ups = _ladder(rows).speedups()
    assert ups[2] == (None, None)
    assert ups[1] == (None, 1.0)
    assert ups[3] == (2.0, 2.0)  # against rung 1, the last row with a time


def test_speedups_without_a_timed_rung_1_have_no_ratio_to_it():
    rows = [RunResult(1, "naive", {"TS": 16}, "ok"),
            RunResult(3, "more work", {"TS": 32, "WPT": 4}, "ok", ms=2.0)]
    assert _ladder(rows).speedups()[3] == (None, None)


def test_a_plot_of_one_rung_without_its_rung_is_refused_by_name():
    spec = PlotSpec("landscape", "landscape-x.png", "", (), "results/x.jsonl")
    with pytest.raises(UsageError, match="landscape-x.png: a landscape plot needs a rung"):
        spec.number
    assert PlotSpec("tiling", "tiling-rung6.png", "", (), "rung 6", 6).number == 6


def _database(tmp_path: Path, shape: Any) -> Path:
    entry = {"rung": 1, "shape": shape, "backend": "opencl", "params": {"TS": 16}, "ms": 1.0,
             "gflops": 0.5, "provenance": {"strategy": "exhaustive"}}
    tuning = tmp_path / "tuning"
    tuning.mkdir()
    (tuning / "dev.json").write_text(json.dumps(
        {"format": "clgemm-tuning-database", "version": 2, "device": "dev",
         "backend": "opencl", "entries": [entry]}))
    (tmp_path / "results").mkdir()
    return tuning


@pytest.mark.parametrize("shape", [[64, 64], [64, 64, 64, 64], [64, "x", 64]])
def test_a_stored_shape_that_is_not_three_integers_is_one_error_naming_the_file(tmp_path, shape):
    tuning = _database(tmp_path, shape)
    with pytest.raises(UsageError, match=r"tuning/dev\.json: shape .* should be three integers"):
        load_results(tmp_path / "results", tuning)


def test_a_stored_shape_of_three_integers_is_read_as_a_triple(tmp_path):
    tuning = _database(tmp_path, [64, 128, 32])
    (db,) = load_results(tmp_path / "results", tuning).databases
    assert [e.shape for e in db.entries] == [(64, 128, 32)]


def test_tune_run_settings_cleared_after_construction_fall_back_to_the_defaults(monkeypatch):
    seen: dict[str, Any] = {}

    def prepare_shape(*args: Any, **kwargs: Any) -> None:
        seen["repeats"], seen["warmup"] = args[8], args[9]

    monkeypatch.setattr(tuner_run, "prepare_shape", prepare_shape)
    run = tuner_run.TuneRun(CPU, [TuneStep(1, (64, 64, 64), 1.0)], False, TuneOptions(),
                            repeats=7, warmup=3)
    run.repeats = run.warmup = None
    run.prepare(Path("unused"), say=print, note=print)
    warmup, repeats = default_repeats(CPU)
    assert seen == {"repeats": repeats, "warmup": warmup}
