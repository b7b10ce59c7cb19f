"""Random sampling without replacement.

Surprisingly hard to beat on tuning spaces where good configurations are common but scattered
(CLTune and kernel_tuner both report this); it is also the yardstick that tells whether a cleverer
strategy earns its complexity.
"""

from __future__ import annotations

import random
from typing import Sequence

from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies.base import Strategy, Trial, random_unevaluated


class RandomSample(Strategy):
    summary = "uniform sample without replacement"

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        return random_unevaluated(space, history, rng, n)
