"""The error measure every result is judged by: its value, and that it keeps out of the BLAS."""

from __future__ import annotations

import numpy as np
import pytest

from clgemm.core import accuracy


@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (300, 229), (1 << 15, 3)])
def test_relative_error_is_the_frobenius_ratio(shape):
    rng = np.random.default_rng(sum(shape))
    want = rng.standard_normal(shape)
    got = (want + 1e-3 * rng.standard_normal(shape)).astype(np.float32)
    expected = np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want)
    assert accuracy.relative_error(got, want) == pytest.approx(expected, rel=1e-12)


def test_unwritten_or_infinite_elements_are_infinitely_wrong():
    want = np.ones((4, 4))
    for bad in (np.nan, np.inf):
        got = np.ones((4, 4), dtype=np.float32)
        got[2, 3] = bad
        assert accuracy.relative_error(got, want) == float("inf")


def test_a_zero_reference_gives_the_plain_norm():
    got = np.full((2, 2), 0.5, dtype=np.float32)
    assert accuracy.relative_error(got, np.zeros((2, 2))) == pytest.approx(1.0)


def test_a_shape_mismatch_is_refused():
    with pytest.raises(ValueError, match="shape"):
        accuracy.relative_error(np.zeros((2, 3), np.float32), np.zeros((3, 2)))


def test_the_check_does_not_go_through_the_blas(monkeypatch):
    """A BLAS call wakes a thread pool that a host busy compiling makes wait; the check must
    not make one, however large the output."""
    def refuse(*args, **kwargs):
        raise AssertionError("the check called the BLAS")
    monkeypatch.setattr(np, "dot", refuse)
    monkeypatch.setattr(np, "vdot", refuse)
    monkeypatch.setattr(np, "matmul", refuse)
    monkeypatch.setattr(np.linalg, "norm", refuse)
    want = np.random.default_rng(1).standard_normal(3 << 15)
    got = want.astype(np.float32)
    assert accuracy.relative_error(got, want) < 1e-7
