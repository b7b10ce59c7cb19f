"""The run's spaces built in a pool of processes are the spaces built here, the pool is sized
by cores, spaces and free memory, and a pool that breaks costs time, never a space."""

from __future__ import annotations

import pytest

from clgemm.core.problem import Problem
from clgemm.devices.limits import DeviceLimits
from clgemm.tuner import funnels, space
from clgemm.tuner.funnels import Funnels, FunnelTask, build, pool_size

H100 = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                    local_mem_bytes=227 * 1024, compute_units=132, device_type="GPU",
                    compute_capability="9.0")


def _tasks() -> list[FunnelTask]:
    keep = [{"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8}]
    return [FunnelTask.of(6, Problem(*shape), H100, True, {}, keep, False)
            for shape in ((256, 256, 256), (512, 128, 64), (1024, 1024, 32))]


@pytest.fixture(autouse=True)
def _nothing_known(monkeypatch):
    """No legal configurations held by this process (an earlier test may have left some)."""
    monkeypatch.setattr(space, "_LEGAL", {})


def test_the_pool_builds_what_is_built_here(monkeypatch):
    monkeypatch.setattr(funnels, "LARGE", 1)  # every space counts as large
    monkeypatch.setattr(funnels.os, "cpu_count", lambda: 2)
    tasks = _tasks()
    with Funnels(tasks) as pooled:
        assert pooled.pool is not None and set(pooled.started) == set(tasks)
        spaces = [pooled.space(t) for t in tasks]
    for task, space in zip(tasks, spaces):
        here = build(task)
        assert space.configs == here.configs and space.funnel == here.funnel
        assert len(space) > 0


def test_a_broken_pool_leaves_the_spaces_to_this_process(monkeypatch):
    monkeypatch.setattr(funnels, "LARGE", 1)
    monkeypatch.setattr(funnels.os, "cpu_count", lambda: 2)
    tasks = _tasks()
    with Funnels(tasks) as pooled:
        for process in list(pooled.pool._processes.values()):  # type: ignore[union-attr]
            process.kill()
        assert [pooled.space(t).configs for t in tasks] == [build(t).configs for t in tasks]


def test_small_spaces_one_core_and_known_ones_need_no_pool(monkeypatch):
    assert Funnels(_tasks()).pool is None  # a few thousand combinations each
    monkeypatch.setattr(funnels, "LARGE", 1)
    monkeypatch.setattr(funnels.os, "cpu_count", lambda: 1)
    assert Funnels(_tasks()).pool is None
    monkeypatch.setattr(funnels.os, "cpu_count", lambda: 2)
    build(_tasks()[0])  # this process now holds the rung's legal configurations
    assert Funnels(_tasks()).pool is None


@pytest.mark.parametrize("cores, large, free_gib, size", [
    (16, 12, 100, 12), (16, 30, 100, 16), (2, 12, 20, 2), (16, 12, 9, 4), (16, 12, 3, 0),
    (16, 1, 100, 0), (1, 12, 100, 0), (16, 0, 100, 0)])
def test_pool_size(monkeypatch, cores, large, free_gib, size):
    monkeypatch.setattr(funnels.os, "cpu_count", lambda: cores)
    pages = {"SC_AVPHYS_PAGES": free_gib << 18, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(funnels.os, "sysconf", lambda name: pages[name])
    assert pool_size(large) == size


def test_a_run_refused_midway_ends_the_pool_at_once(monkeypatch):
    import time
    monkeypatch.setattr(funnels, "LARGE", 1)
    monkeypatch.setattr(funnels.os, "cpu_count", lambda: 2)
    slow = [FunnelTask.of(12, Problem(s, s, s), H100, True, {}, [], False)
            for s in (2048, 4096)]
    t0 = time.monotonic()
    with pytest.raises(KeyError):
        with Funnels(slow) as pooled:
            assert pooled.pool is not None
            raise KeyError("refused")
    assert time.monotonic() - t0 < 10  # the tiled kernel's spaces take far longer
