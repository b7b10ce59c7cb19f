"""Every strategy in the registry, run on replayed journals with no device: what it proposes is
new, distinct and inside the space, it carries on from a history it did not make (what --resume
gives it), it answers [] once the space is measured, and a seed fixes what it does.

The tests are parametrised over `STRATEGIES`, so a strategy added there is held to them
without an edit here; the journals are one measured on this project's CPU and committed, and a
synthetic one with constraints (holes in the product of the candidates) and failures."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Sequence

import pytest

from clgemm.cli import main
from clgemm.cli.tune import strategy_help
from clgemm.core.errors import UsageError
from clgemm.tuner.journal import Journal
from clgemm.tuner.replay import ReplaySet, compare, load_replay, trace
from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies import STRATEGIES, Strategy, Trial, make_strategy, strategy_names

ROOT = Path(__file__).resolve().parents[2]
#: an exhaustive journal of rung 3 (19 configurations of TS x WPT) measured on PoCL
MEASURED = (ROOT / "results" / "journals" / "opencl-authenticamd-pthread-skylake-avx512-amd-epyc-"
            "3.1-debian" / "rung3-256x256x256.jsonl")
#: batch sizes asked for in turn, as a live run's batches and a resumed run's first one differ
BATCHES = (1, 4, 2, 3)
NAMES = list(STRATEGIES)


def _synthetic_journal(path: Path) -> Path:
    """42 configurations: A >= B keeps 14 of the 20 (A, B) pairs, and (16, 1) fails."""
    cands = {"A": [1, 2, 4, 8, 16], "B": [1, 2, 4, 8], "C": [0, 1, 2]}
    header = {"device": "opencl-acme-gpu-1.0", "backend": "opencl", "driver": "1.0",
              "size": [256, 256, 256], "rungs": [5], "strategy": "exhaustive",
              "params": {"5": cands}}
    with Journal.open(path, header) as j:
        for a in cands["A"]:
            for b in cands["B"]:
                for c in cands["C"]:
                    if a < b:
                        continue
                    ok = (a, b) != (16, 1)
                    j.append({"kind": "search", "rung": 5, "config": {"A": a, "B": b, "C": c},
                              "status": "ok" if ok else "wrong",
                              "gflops": float(a * b + c) if ok else None})
    return path


@pytest.fixture(scope="module", params=["measured", "synthetic"])
def replayed(request, tmp_path_factory) -> ReplaySet:
    if request.param == "measured":
        path = MEASURED
    else:
        path = _synthetic_journal(tmp_path_factory.mktemp("strategies") / "synthetic.jsonl")
    (rs,) = load_replay(path)
    return rs


def _drive(strategy: Strategy, rs: ReplaySet, history: list[Trial], seed: int) -> list[Config]:
    """Ask `strategy` until it answers [], measuring each proposal from the journal and
    checking every batch; the configurations it proposed, in order."""
    rng = random.Random(seed)
    order: list[Config] = []
    # Each non-empty batch measures at least one new configuration, so one call more than the
    # space has configurations must find it exhausted.
    for call in range(len(rs.space) + 1):
        n = BATCHES[call % len(BATCHES)]
        batch = strategy.propose(rs.space, history, rng, n)
        if not batch:
            return order
        done = {t.config for t in history}
        assert len(batch) <= n, f"asked for {n}, proposed {len(batch)}"
        assert len(set(batch)) == len(batch), f"proposed one twice: {batch}"
        assert all(c in rs.space.index for c in batch), f"outside the space: {batch}"
        assert not done & set(batch), f"proposed again: {sorted(done & set(batch))}"
        for c in batch:
            history.append(Trial(c, rs.scores[c]))
            order.append(c)
    raise AssertionError(f"still proposing after {len(rs.space)} configurations were measured")


def _trials(rs: ReplaySet, configs: Sequence[Config]) -> list[Trial]:
    return [Trial(c, rs.scores[c]) for c in configs]


@pytest.mark.parametrize("name", NAMES)
def test_every_configuration_once_then_nothing(name, replayed):
    rs = replayed
    strategy = make_strategy(name)
    history: list[Trial] = []
    order = _drive(strategy, rs, history, seed=1)
    assert sorted(order) == sorted(rs.space.configs)
    # Exhausted stays exhausted, for the same object and for a new one given the whole journal
    # in its own order.
    assert strategy.propose(rs.space, history, random.Random(1), 4) == []
    assert make_strategy(name).propose(rs.space, _trials(rs, list(rs.scores)),
                                       random.Random(2), 4) == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("source", ["journal order", "scattered", "its own interrupted run"])
def test_resumes_from_a_history(name, source, replayed):
    """A resumed run hands a new strategy object the journal's trials and nothing else."""
    rs = replayed
    third = len(rs.space) // 3
    if source == "journal order":  # what the tuner measured first: defaults, then in order
        history = _trials(rs, list(rs.scores)[:third])
    elif source == "scattered":
        history = _trials(rs, random.Random(7).sample(rs.space.configs, third))
    else:
        history = trace(name, rs, third, seed=3)
        assert len(history) == third
    before = [t.config for t in history]
    order = _drive(make_strategy(name), rs, history, seed=3)
    assert order and not set(order) & set(before)
    assert sorted(before + order) == sorted(rs.space.configs)


@pytest.mark.parametrize("name", NAMES)
def test_a_seed_fixes_the_run(name, replayed):
    rs = replayed
    start = _trials(rs, rs.space.configs[::4])
    for history in ([], start):
        runs = [_drive(make_strategy(name), rs, list(history), seed=11) for _ in range(2)]
        assert runs[0] == runs[1]


class _Repeating(Strategy):
    """A broken strategy: the same first configurations on every call."""

    summary = "the first configurations, again and again"

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        return space.configs[:n]


class _Backwards(Strategy):
    """A working one outside the package: the space from its end."""

    summary = "every configuration, last first"

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        done = {t.config for t in history}
        return [c for c in reversed(space.configs) if c not in done][:n]


def test_the_checks_catch_a_strategy_that_repeats(replayed):
    with pytest.raises(AssertionError, match="proposed again"):
        _drive(_Repeating(), replayed, [], seed=0)


def test_one_entry_registers_a_strategy(monkeypatch, replayed):
    monkeypatch.setitem(STRATEGIES, "backwards", _Backwards)
    assert strategy_names()[-1] == "backwards"
    assert isinstance(make_strategy(" Backwards "), _Backwards)
    assert "backwards: every configuration, last first" in strategy_help()
    order = [t.config for t in trace("backwards", replayed, 5, seed=0)]
    assert order == replayed.space.configs[::-1][:5]
    monkeypatch.delitem(STRATEGIES, "backwards")
    with pytest.raises(UsageError, match="--strategy 'backwards': unknown"):
        make_strategy("backwards")


def test_compare_replays_every_registered_strategy(tmp_path):
    table = compare(_synthetic_journal(tmp_path / "j.jsonl"), seeds=2)
    rows = [line.split()[0] for line in table.splitlines()[3:]]
    assert rows == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_registry_entry(name):
    cls = STRATEGIES[name]
    assert name == name.strip().lower() and name != "auto"  # reachable by make_strategy
    assert issubclass(cls, Strategy) and cls.summary.strip()
    assert type(make_strategy(name)) is cls


def _unwrapped(text: str) -> str:
    """Help text with its line breaks undone (click wraps long lines, at hyphens too)."""
    return re.sub(r"-\s+", "-", " ".join(text.split()))


def test_cli_help_names_every_strategy(capsys):
    assert main(["tune", "--help"]) == 0
    text = _unwrapped(capsys.readouterr().out)
    assert "--strategy auto|" in text
    for name, cls in STRATEGIES.items():
        assert _unwrapped(f"{name}: {cls.summary}") in text, name
    assert "auto: exhaustive where --budget covers" in text
