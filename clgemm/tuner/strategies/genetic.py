"""A steady-state genetic search: children of the best configurations measured so far.

The whole history is the archive, and the parents are drawn by tournament from its best
`population` entries, so a resumed run continues with the same parents it had. A child takes each
parameter from one parent at random (uniform crossover), then each parameter mutates to a random
candidate with probability 1/parameters. A child that breaks a constraint or was measured
already is repaired to the nearest unmeasured valid configuration by Hamming distance (ties at
random), which keeps every proposal legal without a penalty term. Until the archive holds a
population's worth of results it proposes random configurations.
"""

from __future__ import annotations

import random
from typing import Sequence

import numpy as np

from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies.base import Strategy, Trial, evaluated, random_unevaluated


class Genetic(Strategy):
    summary = "tournament selection, uniform crossover, mutation, nearest-valid repair"

    def __init__(self, population: int = 6, tournament: int = 3):
        self.population = population
        self.tournament = tournament

    def _pick(self, parents: list[tuple[float, Config]], rng: random.Random) -> Config:
        entrants = [parents[rng.randrange(len(parents))] for _ in range(self.tournament)]
        return max(entrants)[1]

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        archive = [(t.score or 0.0, t.config) for t in history if t.config in space.index]
        done = evaluated(history)
        if len(done) >= len(space):
            return []
        if len(archive) < self.population or not any(s for s, _ in archive):
            return random_unevaluated(space, history, rng, n)
        parents = sorted(archive, reverse=True)[:self.population]
        taken = np.zeros(len(space), dtype=bool)
        for c in done:
            i = space.index.get(c)
            if i is not None:
                taken[i] = True
        children: list[Config] = []
        rate = 1.0 / max(len(space.names), 1)
        while len(children) < n and not taken.all():
            a, b = self._pick(parents, rng), self._pick(parents, rng)
            child = [x if rng.random() < 0.5 else y for x, y in zip(a, b)]
            for i, values in enumerate(space.candidates):
                if rng.random() < rate:
                    child[i] = rng.choice(values)
            distance = np.where(taken, np.iinfo(np.int64).max, space.hamming(child))
            nearest = np.flatnonzero(distance == distance.min())
            i = int(nearest[rng.randrange(len(nearest))])
            taken[i] = True
            children.append(space.configs[i])
        return children
