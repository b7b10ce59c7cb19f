"""Simulated annealing over the valid configurations, a batch of neighbours per step.

A neighbour differs from the current configuration in one parameter (in two when every one-step
neighbour is measured); moving only between valid configurations avoids wasting the budget on
repairs. Each step measures a small batch of neighbours (so they can compile in parallel) and
considers the best of them: better is always accepted, worse with probability
exp(relative loss / T), T falling geometrically. Scores are compared relatively so that one
temperature schedule suits a 2 GFLOP/s CPU and a 20 TFLOP/s GPU alike. With no unmeasured
neighbour left the walk restarts from a random unmeasured configuration.
"""

from __future__ import annotations

import math
import random
from typing import Sequence

import numpy as np

from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies.base import Strategy, Trial, evaluated, random_unevaluated


class Annealing(Strategy):
    summary = "simulated annealing on one-parameter moves"

    def __init__(self, t0: float = 0.15, cooling: float = 0.85):
        self.t0 = t0
        self.cooling = cooling
        self.current: Config | None = None
        self.current_score = 0.0
        self.steps = 0
        self.pending: list[Config] = []

    def _update(self, scores: dict[Config, float | None], rng: random.Random) -> None:
        results = [(scores[c] or 0.0, c) for c in self.pending if c in scores]
        self.pending = []
        if self.current is None:
            # Fresh start or a resumed run: begin at the best measured so far, if any.
            ok = [(s, c) for c, s in scores.items() if s]
            if ok:
                self.current_score, self.current = max(ok)
            return
        if not results:
            return
        score, config = max(results)
        t = self.t0 * self.cooling ** self.steps
        self.steps += 1
        loss = (score - self.current_score) / max(self.current_score, 1e-30)
        # One draw for every scored step, taken or not, so that a seed walks the same way;
        # only a loss is weighed, since a gain divided by the tiny T of a long walk overflows.
        draw = rng.random() if score > 0 and t > 0 else 1.0
        downhill_ok = loss < 0 and t > 0 and draw < math.exp(loss / t)
        if score >= self.current_score or downhill_ok:
            self.current, self.current_score = config, score

    def propose(self, space: SearchSpace, history: Sequence[Trial], rng: random.Random,
                n: int) -> list[Config]:
        scores = {t.config: t.score for t in history}
        self._update(scores, rng)
        if self.current is None:
            fresh = random_unevaluated(space, history, rng, n)
            self.pending = fresh
            return fresh
        done = evaluated(history)
        distance = space.hamming(self.current)
        picked: list[Config] = []
        for d in (1, 2):
            near = [space.configs[i] for i in np.flatnonzero(distance == d)]
            near = [c for c in near if c not in done]
            if near:
                picked = rng.sample(near, min(n, len(near)))
                break
        if not picked:  # a local region fully measured: restart elsewhere
            picked = random_unevaluated(space, history, rng, n)
            self.current = None
        self.pending = picked
        return picked
