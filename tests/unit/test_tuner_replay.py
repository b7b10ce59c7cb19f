"""The replay scorer on a synthetic exhaustive journal whose optimum is known."""

from __future__ import annotations

import subprocess
import sys

import pytest

from clgemm.tuner.journal import Journal
from clgemm.tuner.replay import compare, load_replay, run_once, score, trace
from clgemm.tuner.strategies import strategy_names

A = tuple(range(1, 13))
B = tuple(range(1, 13))
OPTIMUM = (7, 3)


def _gflops(a: int, b: int) -> float | None:
    if (a + b) % 11 == 0:
        return None  # a failure (wrong, build error, ...) replays as a failure
    return 100.0 - 2.0 * (a - OPTIMUM[0]) ** 2 - 1.5 * (b - OPTIMUM[1]) ** 2


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "exhaustive.jsonl"
    header = {"device": "opencl-acme-gpu-1.0", "backend": "opencl", "driver": "1.0",
              "size": [512, 512, 512], "rungs": [7], "strategy": "exhaustive",
              "params": {"7": {"A": list(A), "B": list(B)}}}
    with Journal.open(path, header) as j:
        for a in A:
            for b in B:
                g = _gflops(a, b)
                j.append({"kind": "search", "rung": 7, "config": {"A": a, "B": b},
                          "status": "ok" if g else "wrong", "gflops": g})
        j.append({"kind": "confirm", "rung": 7, "config": {"A": 7, "B": 3}, "status": "ok",
                  "gflops": 500.0})  # confirmations are not part of the replayed space
    return path


def test_loaded_space_and_best(journal):
    (rs,) = load_replay(journal)
    assert rs.rung == 7 and len(rs.space) == 144 and rs.best == 100.0
    assert rs.scores[OPTIMUM] == 100.0 and rs.scores[(5, 6)] is None
    assert rs.space.candidates == (A, B)


def test_known_optimum_scores(journal):
    (rs,) = load_replay(journal)
    # The whole budget: every strategy must find the optimum.
    for name in strategy_names():
        assert run_once(name, rs, 144, seed=3) == 100.0
    # Exhaustive is deterministic: its first 14 (10%) are A=1 (B=1..12) and A=2, B=1..2.
    frac, budget = score("exhaustive", rs, 0.10)
    assert budget == 14
    assert frac == pytest.approx(max(_gflops(a, b) or 0 for a, b in
                                     [(1, b) for b in B] + [(2, 1), (2, 2)]) / 100.0)
    # On a smooth single peak the adaptive strategies get close with 10% of the space, and
    # far closer than walking the space in order.
    for name in ("annealing", "genetic"):
        frac, _ = score(name, rs, 0.10)
        assert frac >= 0.9 and frac > score("exhaustive", rs, 0.10)[0], name
    # One evaluation is a budget too (1% of 144 rounds to 1).
    assert score("random", rs, 0.01)[1] == 1


def test_trace_is_the_run_in_order(journal):
    (rs,) = load_replay(journal)
    for name in ("exhaustive", "annealing"):
        trials = trace(name, rs, 30, seed=5)
        assert len(trials) == 30 and len({t.config for t in trials}) == 30
        assert all(t.score == rs.scores[t.config] for t in trials)
        assert run_once(name, rs, 30, seed=5) == max(t.score or 0 for t in trials)
    # Exhaustive walks the space in its order.
    assert [t.config for t in trace("exhaustive", rs, 13, seed=0)] == rs.space.configs[:13]


def test_compare_table_and_cli(journal):
    text = compare(journal, seeds=5)
    lines = text.splitlines()
    assert lines[0].startswith("rung 7: 144 configurations, best 100.00 GFLOP/s")
    assert "1% (1 evals)" in lines[1] and "10% (14 evals)" in lines[1]
    for name in strategy_names():
        assert any(line.startswith(name) for line in lines)
    r = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--compare-strategies",
                        str(journal)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "median over 20 seeds" in r.stdout and "genetic" in r.stdout
    bad = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--compare-strategies",
                          str(journal) + ".missing"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --compare-strategies")
