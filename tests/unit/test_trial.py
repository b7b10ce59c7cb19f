"""The trial's product (clgemm/library/trial.py), with no device: the sizes it keeps and cuts,
the operands as a device would hold them, and its verdict on right, unwritten and wrong
results."""

from __future__ import annotations

import numpy as np
import pytest

from clgemm.library import trial


@pytest.mark.parametrize("shape, want", [
    ((4096, 4096, 4096), (256, 256, 256)),
    ((4097, 16, 4095), (257, 16, 511)),
    ((511, 512, 1), (511, 256, 1)),
    ((300, 7, 150), (300, 7, 150)),
])
def test_sizes_above_keep_are_cut_to_their_remainder(shape, want):
    t = trial.trial_for(*shape, False, True, 1.0, 0.0)
    assert (t.m, t.n, t.k) == want
    assert t.a.shape == (want[0], want[2]) and t.b.shape == (want[1], want[2])


def _device_result(t: trial.TrialProduct) -> np.ndarray:
    """What a right kernel leaves in C's buffer: column-major, flat."""
    a, b, _ = t.flat()
    op_a = a.reshape(t.a.shape, order="F")
    op_a = op_a.T if t.trans_a else op_a
    op_b = b.reshape(t.b.shape, order="F")
    op_b = op_b.T if t.trans_b else op_b
    c = t.alpha * (op_a.astype(np.float64) @ op_b)
    if t.beta:
        c += t.beta * t.c  # beta 0: C is not read
    return c.astype(np.float32).ravel(order="F")


@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("beta", [0.0, -0.5])
def test_verdicts(trans, beta):
    t = trial.trial_for(600, 37, 700, *trans, 1.5, beta)
    right = _device_result(t)
    assert t.judge(right, "x") is None
    holes = right.copy()
    holes[-3:] = np.nan
    assert "3 of" in str(t.judge(holes, "x"))
    edge = right.copy()
    edge[t.m - 1 + t.m * (t.n // 2)] += 1.0  # one element of the last row
    assert t.judge(edge, "x") is not None
    shifted = np.roll(right, 1)
    wrong = t.judge(shifted, "the kernel")
    assert isinstance(wrong, trial.WrongResultError)
    assert str(wrong).startswith(f"the kernel gave a wrong result at {t.m}x{t.n}x{t.k}")
    if beta == 0:
        assert np.isnan(t.flat()[2]).all()  # C poisoned where it is not read


def test_a_split_call_is_tried_on_two_slices_each_cut():
    assert trial.trial_for(64, 64, 16384, False, False, 1.0, 0.0, split=8).k == 2 * 256
    assert trial.trial_for(64, 64, 3 * 400, False, False, 1.0, 0.0, split=3).k == 2 * 400
    assert trial.trial_for(64, 64, 3 * 1000, False, False, 1.0, 0.0, split=3).k == 2 * 488


def test_a_cut_that_would_break_a_kernels_multiple_keeps_the_size():
    assert trial.trial_sizes(768, 1000, 4096, (384, 8, 16)) == (768, 256 + 1000 % 256, 256)
    assert trial.trial_sizes(770, 16, 16, (384, 1, 1)) == (770, 16, 16)


def test_a_stacks_second_product_differs():
    first, second = (trial.trial_for(40, 30, 20, False, False, 1.0, 0.0, salt=s)
                     for s in (0, 1))
    assert not np.array_equal(first.a, second.a)
