"""The pool of new C's for repeated calls on NumPy arrays: a block is lent again only once no
array uses its memory, views included."""

from __future__ import annotations

import numpy as np
import pytest

from clgemm.library import host_pool
from clgemm.library.host_pool import HostPool

SHAPE = (512, 1024)  # 2 MiB: within the pool's sizes


def _address(x: np.ndarray) -> int:
    return int(x.__array_interface__["data"][0])


def test_a_dropped_result_lends_its_block_again():
    pool = HostPool()
    first = pool.empty(SHAPE)
    where = _address(first)
    assert where % 4096 == 0 and first.shape == SHAPE and first.flags.c_contiguous
    assert first.dtype == np.float32
    del first
    assert _address(pool.empty(SHAPE)) == where


@pytest.mark.parametrize("keep", [lambda c: c, lambda c: c.T, lambda c: c[10:20, ::3],
                                  lambda c: c.reshape(-1), lambda c: memoryview(c)])
def test_a_block_stays_lent_while_anything_made_from_it_lives(keep):
    pool = HostPool()
    first = pool.empty(SHAPE)
    kept = keep(first)
    where = _address(first)
    del first
    second = pool.empty(SHAPE)
    assert _address(second) != where
    # the two may be written at once without either seeing the other's floats
    second[...] = 2.0
    np.asarray(kept)[...] = 1.0
    assert (second == 2.0).all()


def test_two_results_alive_at_once_never_share_memory():
    pool = HostPool()
    held = [pool.empty(SHAPE) for _ in range(host_pool.PER_SIZE + 2)]
    starts = {_address(x) for x in held}
    assert len(starts) == len(held)
    assert sum(x.base is not None and x.base.size > x.size for x in held) == host_pool.PER_SIZE


@pytest.mark.parametrize("shape", [(16, 16), (8192, 4096)])
def test_sizes_outside_the_pool_are_numpys_own(shape):
    x = HostPool().empty(shape)
    assert x.shape == shape and x.flags.owndata and x.dtype == np.float32


def test_the_pool_keeps_no_more_than_its_bound(monkeypatch):
    monkeypatch.setattr(host_pool, "KEPT_BYTES", 3 * 4 * SHAPE[0] * SHAPE[1])
    pool = HostPool()
    shapes = [SHAPE, (SHAPE[0] + 1, SHAPE[1]), (SHAPE[0] + 2, SHAPE[1]), (SHAPE[0] + 3, SHAPE[1])]
    made = [pool.empty(s) for s in shapes]
    assert [x.flags.owndata for x in made] == [False, False, True, True]
    pool.clear()
    assert not pool.empty(SHAPE).flags.owndata  # room again after clear
