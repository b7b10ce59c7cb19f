"""The course's tiling pictures: each example configuration is one the rung accepts, and the
work is shared out as the kernels share it (every work-item computes as many outputs and loads
as many values as every other, and nobody is left out)."""

from __future__ import annotations

import numpy as np
import pytest

from clgemm.course.tiling import EXAMPLES, tiling
from clgemm.rungs import REGISTRY


@pytest.mark.parametrize("number", sorted(REGISTRY))
def test_every_rung_has_a_valid_example(number):
    t = tiling(number)
    REGISTRY[number].validate(t.params)
    assert t.c.shape == REGISTRY[number].output_tile(t.params)


@pytest.mark.parametrize("number", sorted(EXAMPLES))
def test_work_is_shared_evenly(number):
    t = tiling(number)
    outputs = np.bincount(t.c.ravel(), minlength=t.work_items)
    assert (outputs == outputs[0]).all() and outputs[0] >= 1, outputs
    if number == 1:
        return  # no local tiles: one work-item's global reads are drawn
    for tile in (t.a, t.b):
        loads = np.bincount(tile.ravel(), minlength=t.work_items)
        assert (tile >= 0).all() and (loads == loads[0]).all(), loads


def test_register_block_is_strided():
    """Rung 6 on: work-item (tidm, tidn) computes rows tidm + i*RTSM and columns tidn + j*RTSN,
    as the kernels index C."""
    t = tiling(6)
    p = t.params
    rtsm, rtsn = p["TSM"] // p["WPTM"], p["TSN"] // p["WPTN"]
    for m in range(p["TSM"]):
        for n in range(p["TSN"]):
            assert t.c[m, n] == (n % rtsn) * rtsm + m % rtsm
