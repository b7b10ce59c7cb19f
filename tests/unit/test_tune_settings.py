"""`clgemm tune` and `clgemm.tune()` make the same settings from equivalent inputs and hand
them to the same orchestration; a bad value is refused once, by the settings, in the caller's
own words (the option at the command line, the keyword in Python), before a device is opened."""

from __future__ import annotations

import importlib
import math
import re
from pathlib import Path
from typing import Any

import pytest

from clgemm.cli import main
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.tuner import tune_run
from clgemm.tuner.journal import COMMAND, PYTHON
from clgemm.tuner.settings import TuneSettings

#: the command's module (the package's `tune` is the command itself)
cli_tune = importlib.import_module("clgemm.cli.tune")


class _Recorded:
    """A Tuning that keeps its settings and runs nothing: no device is needed to see what the
    command and the function asked for."""

    made: list[TuneSettings] = []

    def __init__(self, settings: TuneSettings, report: Any = None) -> None:
        self.made.append(settings)

    def prepare(self) -> None:
        return None

    def run(self) -> None:
        return None


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[TuneSettings]:
    made: list[TuneSettings] = []
    monkeypatch.setattr(_Recorded, "made", made)
    monkeypatch.setattr(cli_tune, "Tuning", _Recorded)
    monkeypatch.setattr(tune_run, "Tuning", _Recorded)
    return made


FULL_CLI = ["--device", "0", "--rungs", "3,tiled", "--size", "64", "--budget", "5",
            "--only", "TS=16,32", "--seed", "2", "--confirm", "1", "--jobs", "0", "--repeats",
            "2", "--warmup", "0", "--fresh", "--no-heuristics", "--strategy", "random",
            "--launch-timeout", "10", "--build-timeout", "20", "--database", "db.json"]
FULL_PYTHON = {"device": "0", "rungs": [3, "tiled"], "shapes": 64, "budget": 5,
               "only": {"TS": [16, 32]}, "seed": 2, "confirm": 1, "jobs": 0, "repeats": 2,
               "warmup": 0, "fresh": True, "heuristics": False, "strategy": "random",
               "launch_timeout": 10.0, "build_timeout": 20.0, "database": Path("db.json")}


@pytest.mark.parametrize("cli,python", [
    (FULL_CLI, FULL_PYTHON),
    ([], {}),
    (["--mnk", "64", "128", "32", "--time", "5"], {"shapes": (64, 128, 32), "seconds": 5}),
    (["--shapes", "64,128x128x32", "--exhaustive", "--rungs", "1-3"],
     {"shapes": [64, (128, 128, 32)], "exhaustive": True, "rungs": "1-3"}),
    (["--backend", "opencl", "--resume", "--only", "VWM=4"],
     {"backend": "opencl", "resume": True, "only": {"VWM": 4}}),
])
def test_the_command_and_the_function_make_equal_settings(recorded, cli, python):
    assert main(["tune", *cli]) == 0
    tune_run.tune(**python, verbose=False)
    command, function = recorded
    assert command == function
    assert command.wording == COMMAND and function.wording == PYTHON
    assert command.command.startswith("clgemm ")
    assert function.command.startswith("clgemm.tune(")


def test_settings_hold_the_normalised_values(recorded):
    tune_run.tune(**FULL_PYTHON, verbose=False)
    (settings,) = recorded
    assert settings.rungs == (3, 12) and settings.shapes == (Problem(64, 64, 64),)
    assert settings.only == {"TS": (16, 32)} and settings.database == Path("db.json")
    assert not settings.bounded and settings.options().strategy == "random"
    assert TuneSettings(exhaustive=True).options().strategy == "exhaustive"
    assert TuneSettings().bounded


@pytest.mark.parametrize("cli,python,option,keyword", [
    (["--budget", "0"], {"budget": 0}, "--budget 0: must be positive",
     "budget=0: must be positive"),
    (["--time", "nan"], {"seconds": math.nan}, "--time nan: must be a finite number",
     "seconds=nan: must be a finite number"),
    (["--jobs", "-1"], {"jobs": -1}, "--jobs -1: must be >= 0", "jobs=-1: must be >= 0"),
    (["--confirm", "-2"], {"confirm": -2}, "--confirm -2: must be >= 0",
     "confirm=-2: must be >= 0"),
    (["--launch-timeout", "0"], {"launch_timeout": 0}, "--launch-timeout 0: must be positive",
     "launch_timeout=0: must be positive"),
    (["--build-timeout", "-inf"], {"build_timeout": -math.inf},
     "--build-timeout -inf: must be a finite number",
     "build_timeout=-inf: must be a finite number"),
    (["--budget", "3", "--exhaustive"], {"budget": 3, "exhaustive": True},
     "give one of --budget, --time and --exhaustive, not several",
     "give one of budget, seconds and exhaustive, not several"),
    (["--strategy", "hillclimb"], {"strategy": "hillclimb"}, "--strategy 'hillclimb': unknown",
     "strategy='hillclimb': unknown"),
    (["--fresh", "--resume"], {"fresh": True, "resume": True},
     "--fresh starts the journals over and --resume continues them",
     "fresh=True starts the journals over and resume=True continues them"),
    (["--only", "TS=-1"], {"only": {"TS": [-1]}}, "--only TS=-1: give non-negative integers",
     "only['TS']: give non-negative integers"),
])
def test_a_bad_value_is_refused_once_in_the_callers_words(recorded, capsys, cli, python,
                                                          option, keyword):
    assert main(["tune", *cli]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option}"), lines
    with pytest.raises(UsageError) as error:
        tune_run.tune(**python, verbose=False)
    assert str(error.value).startswith(keyword) and "--" not in str(error.value)
    assert recorded == []  # refused before a run was made, so before a device was opened


def test_the_command_leaves_its_checks_to_the_settings():
    """The tune's own numbers carry no click callback: the settings check them, for the
    command and the function alike, so a check cannot differ between the two."""
    own = {"budget", "time_s", "jobs", "confirm", "launch_timeout", "build_timeout"}
    checked = [p.name for p in cli_tune.tune.params if p.name in own and p.callback]
    assert checked == []


@pytest.mark.parametrize("wording,where", [(COMMAND, "--only VWM=4"),
                                            (PYTHON, "only['VWM']")])
def test_a_parameter_no_planned_rung_has_is_refused_in_the_callers_words(wording, where):
    settings = TuneSettings(rungs=(3,), only={"VWM": (4,)}, wording=wording)
    with pytest.raises(UsageError, match=rf"^{re.escape(where)}: none of the chosen rungs has a "
                                         r"parameter VWM \(they have TS, WPT\)"):
        settings.only_among([3])
    assert TuneSettings(only={"TS": (16,)}).only_among([3]) == {"TS": (16,)}


def test_settings_made_directly_are_checked_too():
    with pytest.raises(UsageError, match="^seconds=-1: must be positive"):
        TuneSettings(seconds=-1)
    with pytest.raises(UsageError, match="^--time -1: must be positive"):
        TuneSettings(seconds=-1, wording=COMMAND)
