"""Search strategies, each one module, all named in one dictionary.

`STRATEGIES` is the only list of strategies: `make_strategy` and `strategy_names` read it, the
command's `--strategy` help is written from it (names and each one's `summary`), the offline
replay compares every entry, and `tests/unit/test_strategies.py` runs every entry on replayed
journals. A new strategy is a module here whose class derives from `base.Strategy`, plus its
entry below; nothing else needs to change.
"""

from __future__ import annotations

from clgemm.core.errors import UsageError
from clgemm.tuner.strategies.annealing import Annealing
from clgemm.tuner.strategies.base import (Strategy, Trial, evaluated, random_unevaluated,
                                          unevaluated)
from clgemm.tuner.strategies.exhaustive import Exhaustive
from clgemm.tuner.strategies.genetic import Genetic
from clgemm.tuner.strategies.random_sample import RandomSample

#: name -> strategy; the order is the order of the help, of error messages and of replay tables
STRATEGIES: dict[str, type[Strategy]] = {
    "exhaustive": Exhaustive,
    "random": RandomSample,
    "annealing": Annealing,
    "genetic": Genetic,
}

__all__ = ["STRATEGIES", "Annealing", "Exhaustive", "Genetic", "RandomSample", "Strategy",
           "Trial", "evaluated", "make_strategy", "random_unevaluated", "strategy_names",
           "unevaluated"]


def strategy_names() -> list[str]:
    return list(STRATEGIES)


def make_strategy(name: str, given: str | None = None) -> Strategy:
    """The strategy called `name`; an unknown name is refused as `given` (how the caller wrote
    it: the command's `--strategy 'x'` by default, `strategy='x'` from Python)."""
    try:
        return STRATEGIES[name.strip().lower()]()
    except KeyError:
        shown = given if given is not None else f"--strategy '{name}'"
        raise UsageError(f"{shown}: unknown (choose from "
                         f"{', '.join(strategy_names())}, or auto)") from None
