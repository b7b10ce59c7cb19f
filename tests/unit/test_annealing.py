"""Simulated annealing late in a long walk, when its temperature has fallen to almost nothing:
a better neighbour is still taken and a worse one refused, with no arithmetic error (a gain
divided by such a temperature overflowed exp())."""

from __future__ import annotations

import random

from clgemm.tuner.strategies.annealing import Annealing


def _late_walk(better: float) -> Annealing:
    walk = Annealing()
    walk.current, walk.current_score, walk.steps = ("here",), 100.0, 100
    walk.pending = [("there",)]
    walk._update({("there",): better}, random.Random(1))
    return walk


def test_a_late_gain_is_taken_without_overflow():
    walk = _late_walk(250.0)
    assert walk.current == ("there",) and walk.current_score == 250.0


def test_a_late_loss_is_refused():
    walk = _late_walk(99.0)
    assert walk.current == ("here",) and walk.current_score == 100.0


def test_an_early_small_loss_can_be_taken():
    accepted = 0
    for seed in range(200):
        walk = Annealing()
        walk.current, walk.current_score = ("here",), 100.0
        walk.pending = [("there",)]
        walk._update({("there",): 99.0}, random.Random(seed))
        accepted += walk.current == ("there",)
    assert 100 < accepted < 200  # exp(-0.01 / 0.15) is about 0.94


def test_a_walk_past_where_its_temperature_reaches_zero_refuses_a_loss():
    walk = Annealing()
    walk.current, walk.current_score, walk.steps = ("here",), 100.0, 10**5  # T is 0.0
    walk.pending = [("there",)]
    walk._update({("there",): 99.0}, random.Random(1))
    assert walk.current == ("here",)
