"""Scoring search strategies offline against a saved exhaustive journal.

Measuring a strategy live costs as much as tuning, and its result depends on luck; replaying it
against a journal that already holds every configuration's result costs nothing, so it can be run
for many seeds and budgets. The question answered is the one a user has: "if I can only afford x%
of the space, how close to the true best do I get?" For each strategy and budget (1%, 2%, 5% and
10% of the space by default), each seed runs the strategy with the journal as the oracle and
scores the best GFLOP/s it saw as a fraction of the journal's best; the table shows the median
over the seeds (20 by default), so one lucky seed does not flatter a strategy.

The space replayed is the set of configurations the journal measured (for an exhaustive journal,
exactly what the funnel left), and failures replay as failures. A record that is not a
measurement of integer parameters (an edited journal) is left out of the replay.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from tabulate import tabulate

from clgemm.core.errors import UsageError
from clgemm.core.validation import is_finite, is_int
from clgemm.tuner.journal import read_journal
from clgemm.tuner.rung_tune import PARAM_LIMIT
from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies import Trial, make_strategy, strategy_names

FRACTIONS = (0.01, 0.02, 0.05, 0.10)
SEEDS = 20
#: proposals per call, the same default as a live run's batch
BATCH = 4


@dataclass
class ReplaySet:
    rung: int
    space: SearchSpace
    scores: dict[Config, float | None]
    strategy: str

    @property
    def best(self) -> float:
        return max((s for s in self.scores.values() if s), default=0.0)


def _value(v: Any) -> bool:
    return is_int(v) and -PARAM_LIMIT < v < PARAM_LIMIT


def _measurement(r: Mapping) -> bool:
    """A search record with a rung number and a configuration of integers."""
    config = r.get("config")
    return (r.get("kind", "search") == "search" and is_int(r.get("rung", 0))
            and isinstance(config, dict) and bool(config)
            and all(isinstance(k, str) and _value(v) for k, v in config.items()))


def _declared(header: Mapping, rung: int) -> Mapping[str, Sequence[int]]:
    """The candidates the header declares for a rung, where they are lists of integers."""
    params = header.get("params")
    declared = params.get(str(rung)) if isinstance(params, dict) else None
    if not isinstance(declared, dict) or not all(
            isinstance(v, list) and all(_value(x) for x in v) for v in declared.values()):
        return {}
    return declared


def load_replay(path: Path) -> list[ReplaySet]:
    """One replay set per rung in the journal."""
    header, records, _ = read_journal(Path(path))
    by_rung: dict[int, list[dict]] = {}
    for r in records:
        if "config" in r and _measurement(r):
            by_rung.setdefault(int(r.get("rung", 0)), []).append(r)
    if not by_rung:
        raise UsageError(f"{path}: the journal holds no measurements to replay")
    sets = []
    for rung, recs in sorted(by_rung.items()):
        declared = _declared(header, rung)
        names = tuple(declared) or tuple(recs[0]["config"])
        scores: dict[Config, float | None] = {}
        for r in recs:
            if set(r["config"]) != set(names):
                continue
            key = tuple(int(r["config"][n]) for n in names)
            score = r.get("gflops") if r.get("status") == "ok" else None
            scores[key] = (score if isinstance(score, (int, float)) and is_finite(score)
                           and score > 0 else None)
        configs = list(scores)
        candidates = tuple(tuple(declared[n]) if n in declared
                           else tuple(sorted({c[i] for c in configs}))
                           for i, n in enumerate(names))
        strategies = header.get("strategies")
        made_by = ((strategies.get(str(rung)) if isinstance(strategies, dict) else None)
                   or header.get("strategy", "?"))
        sets.append(ReplaySet(rung, SearchSpace(names, candidates, configs), scores,
                              str(made_by)))
    return sets


def run_once(name: str, rs: ReplaySet, budget: int, seed: int, batch: int = BATCH) -> float:
    """Best score one run of strategy `name` reaches within `budget` evaluations."""
    return max((t.score for t in trace(name, rs, budget, seed, batch) if t.score), default=0.0)


def trace(name: str, rs: ReplaySet, budget: int, seed: int, batch: int = BATCH) -> list[Trial]:
    """Every evaluation of one run of strategy `name`, in order: the best-so-far curve of a
    strategy (how fast it closes in, not just where it ends) is read from this."""
    strategy = make_strategy(name)
    rng = random.Random(seed)
    history: list[Trial] = []
    seen: set[Config] = set()
    stalls = 0
    while len(history) < budget and stalls < 3:
        proposed = strategy.propose(rs.space, history, rng, min(batch, budget - len(history)))
        fresh = [c for c in dict.fromkeys(proposed) if c in rs.space.index and c not in seen]
        if not proposed:
            break
        stalls = 0 if fresh else stalls + 1
        for c in fresh[:budget - len(history)]:
            seen.add(c)
            history.append(Trial(c, rs.scores.get(c)))
    return history


def score(name: str, rs: ReplaySet, fraction: float, seeds: int = SEEDS) -> tuple[float, int]:
    """(median fraction of the best reached, budget in evaluations)."""
    budget = max(1, round(fraction * len(rs.space)))
    best = rs.best
    if best <= 0:
        return 0.0, budget
    reached = [run_once(name, rs, budget, seed) / best for seed in range(seeds)]
    return statistics.median(reached), budget


def compare(path: Path, strategies: Sequence[str] | None = None,
            fractions: Sequence[float] = FRACTIONS, seeds: int = SEEDS) -> str:
    """The comparison table(s) for a journal, one per rung."""
    names = list(strategies or strategy_names())
    out = []
    for rs in load_replay(Path(path)):
        rows = []
        budgets: list[int] = []
        for name in names:
            row = [name]
            budgets = []
            for f in fractions:
                frac, budget = score(name, rs, f, seeds)
                budgets.append(budget)
                row.append(f"{100 * frac:.1f}%")
            rows.append(row)
        headers = ["strategy"] + [f"{100 * f:g}% ({b} evals)" for f, b in zip(fractions, budgets)]
        note = "" if rs.strategy == "exhaustive" else (
            f" (journal strategy: {rs.strategy}; the replayed space is what it measured)")
        title = (f"rung {rs.rung}: {len(rs.space)} configurations, best {rs.best:.2f} GFLOP/s; "
                 f"median over {seeds} seeds of the fraction of the best reached{note}")
        out.append(title + "\n" + tabulate(rows, headers=headers, disable_numparse=True,
                                           colalign=("left",) + ("right",) * len(fractions)))
    return "\n\n".join(out)
