"""The confirmation of a timed search: as many alternating rounds as its allowance holds, never
fewer than two, with the launches each candidate is judged by kept; untimed, five."""

from __future__ import annotations

import time
from typing import Any, Mapping

import pytest

from clgemm.core.problem import Problem
from clgemm.rungs import get_rung
from clgemm.tuner import rung_tune
from clgemm.tuner.rung_tune import (CONFIRM_ROUNDS, TuneOptions, _confirm_rounds,
                                    confirm_allowance, confirm_plan)


def test_an_untimed_confirmation_keeps_its_five_rounds():
    assert confirm_allowance(TuneOptions()) is None
    assert confirm_plan(30.0, None, 10, 2) == (CONFIRM_ROUNDS, 2)


@pytest.mark.parametrize("first_round_s, rounds, later", [
    (0.5, CONFIRM_ROUNDS, 2),   # room for every round: as before
    (3.0, 3, 4),                # room for two more rounds of the first round's time
    (20.0, 2, 8),               # the first round alone fills it: one more, in reverse order
])
def test_a_slow_confirmation_takes_fewer_rounds_of_more_launches(first_round_s, rounds, later):
    allowance = confirm_allowance(TuneOptions(time_s=45.0))
    assert allowance == pytest.approx(11.25)
    got = confirm_plan(first_round_s, allowance, 10, 2)
    assert got == (rounds, later)
    assert 2 + (got[0] - 1) * got[1] >= 10  # each candidate still judged by ten launches


def test_a_short_step_confirms_within_the_floor():
    assert confirm_allowance(TuneOptions(time_s=3.5)) == rung_tune.CONFIRM_FLOOR_S


class _Slow:
    """Every evaluation takes `seconds` of the host's time, whatever its launches."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.calls: list[tuple[int, int]] = []

    def evaluate(self, ref: Any, params: Mapping[str, int], repeats: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]:
        time.sleep(self.seconds)
        self.calls.append((params["TS"], int(repeats or 0)))
        ms = 1.0 + params["TS"] / 100
        return {"status": "ok", "ms": ms, "gflops": 1.0 / ms, "times_ms": [ms] * int(repeats or 0)}


class _Journal:
    def __init__(self) -> None:
        self.records: list[dict] = []

    def append(self, rec: dict, keep: bool = True) -> None:
        self.records.append(rec)


@pytest.mark.parametrize("time_s, evaluations", [(None, 3 * CONFIRM_ROUNDS), (1.0, 3 * 2)])
def test_the_rounds_follow_the_evaluations_time(monkeypatch, time_s, evaluations):
    """Three candidates at 20 ms an evaluation: untimed, five rounds; with a 50 ms allowance,
    two, the second in reverse order, and every candidate measured ten times all the same."""
    monkeypatch.setattr(rung_tune, "CONFIRM_FLOOR_S", 0.05)
    monkeypatch.setattr(rung_tune, "CONFIRM_SHARE", 0.0)
    slow, journal = _Slow(0.02), _Journal()
    top = [{"config": {"TS": ts}} for ts in (8, 16, 32)]
    options = TuneOptions(time_s=time_s, confirm_repeats=10)
    confirmed = _confirm_rounds(get_rung(2), top, journal, slow, options, 2,
                                Problem(64, 64, 64))
    assert len(slow.calls) == evaluations == len(journal.records)
    assert [ts for ts, _ in slow.calls[3:6]] == [32, 16, 8]
    assert all(n == 10 for _, _, n, _ in confirmed)
    assert min(confirmed, key=lambda c: c[1]["ms"])[0]["config"] == {"TS": 8}
