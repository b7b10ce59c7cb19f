"""What every search strategy shares: the trial it learns from, the one-method interface the
tuner and the offline replay drive, and the helpers most strategies need.

A strategy is asked for the next few configurations given everything measured so far; it returns
them or an empty list when it has nothing left to propose. It may keep private state between
calls, but must rebuild what it needs from `history` when that holds trials it did not propose:
that is what makes `--resume` work for every strategy without a saved strategy state. Asking for
several at once (`n`) lets the tuner compile the batch in parallel with measuring it.

These definitions sit apart from the package's registry so that a strategy module imports them
directly, and the registry imports the strategy modules, with no cycle between the two.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import AbstractSet, ClassVar, Sequence

from clgemm.tuner.space import Config, SearchSpace


@dataclass(frozen=True)
class Trial:
    """One measured configuration; `score` is GFLOP/s of a verified result, None for a failure."""

    config: Config
    score: float | None


class Strategy:
    """The interface; a subclass is registered under its name in `STRATEGIES`."""

    #: one line for the command's help and the documentation: what the strategy does
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
