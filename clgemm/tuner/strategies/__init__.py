"""Search strategies behind one small interface, so the tuner and the offline replay drive them
the same way.

A strategy is asked for the next few configurations given everything measured so far; it returns
them or an empty list when it has nothing left to propose. It may keep private state between
calls, but must rebuild what it needs from `history` when that holds trials it did not propose:
that is what makes `--resume` work for every strategy without a saved strategy state. Asking for
several at once (`n`) lets the tuner compile the batch in parallel with measuring it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import AbstractSet, ClassVar, Sequence

from ...errors import UsageError
from ..space import Config, SearchSpace


@dataclass(frozen=True)
class Trial:
    """One measured configuration; `score` is GFLOP/s of a verified result, None for a failure."""

    config: Config
    score: float | None


class Strategy:
    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        """Up to `n` distinct configurations of `space` absent from `history`; [] when done."""
        raise NotImplementedError


def evaluated(history: Sequence[Trial]) -> set[Config]:
    return {t.config for t in history}


def unevaluated(space: SearchSpace, history: Sequence[Trial]) -> list[Config]:
    done = evaluated(history)
    return [c for c in space.configs if c not in done]


def random_unevaluated(space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                       n: int, exclude: AbstractSet[Config] = frozenset()) -> list[Config]:
    left = [c for c in unevaluated(space, history) if c not in exclude]
    return rng.sample(left, min(n, len(left)))


def strategy_names() -> list[str]:
    return list(_registry())


def _registry() -> dict[str, type[Strategy]]:
    return {s.name: s for s in (Exhaustive, RandomSample, Annealing, Genetic)}


def make_strategy(name: str, given: str | None = None) -> Strategy:
    """The strategy called `name`; an unknown name is refused as `given` (how the caller wrote
    it: the command's `--strategy 'x'` by default, `strategy='x'` from Python)."""
    try:
        return _registry()[name.strip().lower()]()
    except KeyError:
        shown = given if given is not None else f"--strategy '{name}'"
        raise UsageError(f"{shown}: unknown (choose from "
                         f"{', '.join(strategy_names())}, or auto)") from None


# The strategies build on the definitions above, so they are imported after them.
from .annealing import Annealing  # noqa: E402
from .exhaustive import Exhaustive  # noqa: E402
from .genetic import Genetic  # noqa: E402
from .random_sample import RandomSample  # noqa: E402
