"""Exhaustive search: every configuration, in the space's generation order.

The baseline every other strategy is scored against, and the only one whose result needs no
luck. Generation order (the product of the candidate lists) is kept rather than shuffled so that
an interrupted run resumes exactly where it stopped.
"""

from __future__ import annotations

import random
from typing import Sequence

from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies.base import Strategy, Trial, evaluated


class Exhaustive(Strategy):
    summary = "every configuration in generation order"

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        done = evaluated(history)
        out: list[Config] = []
        for c in space.configs:
            if c not in done:
                out.append(c)
                if len(out) >= n:
                    break
        return out
