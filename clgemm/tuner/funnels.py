"""A run's search spaces built before anything is measured, the largest in processes of their
own.

The tiled kernel's funnel goes through tens of millions of combinations, and the plain tune
asks for it at a dozen shapes: one after the other they are the first minute or more of a run,
with every core but one idle. Here each space that large is handed to a pool of spawned
processes as soon as the run is planned, so they are built side by side while the run prints
the funnels in order; a small space is built where it is asked for, since sending it to
another process would cost more than building it. Each process keeps its own cache of the
legal configurations (`space._legal`), so it builds that once for all the spaces it is given;
a space whose legal configurations this process holds already (a second run in one process,
as a test suite makes) is built here too. A process
holds more than a gigabyte while it builds the tiled kernel's space, so the pool is no larger
than the free memory allows; where it cannot help (one core, one large space) or fails (a pool
that breaks), the spaces are built here, with the same result.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Mapping, Sequence

from clgemm.core.problem import Problem
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import get_rung
from clgemm.tuner import worker as _worker
from clgemm.tuner.evaluate import holding_ctrl_c
from clgemm.tuner.space import SearchSpace, build_space, candidates_of, legal_known

#: a space of at least this many combinations is built in the pool
LARGE = 1_000_000
#: the memory one pool process is counted to need while it builds a large space
PROCESS_BYTES = 2 << 30


@dataclass(frozen=True)
class FunnelTask:
    """Everything one space is built from, in a form another process can take: the rung by
    number, `only` and `keep` as tuples."""

    rung: int
    problem: Problem
    limits: DeviceLimits
    heuristics: bool
    only: tuple[tuple[str, tuple[int, ...]], ...]
    keep: tuple[tuple[tuple[str, int], ...], ...]
    read_b_pays: bool

    @classmethod
    def of(cls, rung: int, problem: Problem, limits: DeviceLimits, heuristics: bool,
           only: Mapping[str, Sequence[int]], keep: Sequence[Mapping[str, int]],
           read_b_pays: bool) -> "FunnelTask":
        return cls(rung, problem, limits, heuristics,
                   tuple(sorted((k, tuple(v)) for k, v in only.items())),
                   tuple(tuple(sorted(c.items())) for c in keep), read_b_pays)

    @property
    def combinations(self) -> int:
        return math.prod(len(c) for c in candidates_of(get_rung(self.rung), dict(self.only)))


def build(task: FunnelTask) -> SearchSpace:
    """The task's space, as `build_space` makes it."""
    return build_space(get_rung(task.rung), task.limits, task.problem,
                       heuristics=task.heuristics, only=dict(task.only),
                       keep=[dict(c) for c in task.keep], read_b_pays=task.read_b_pays)


def _quiet_child() -> None:
    """A pool process leaves Ctrl-C to the run and ends with it."""
    _worker.ignore_ctrl_c()
    _worker.die_with_parent()


def pool_size(large: int) -> int:
    """How many processes build `large` large spaces: one per core and per space, no more than
    the free memory holds, none (build them here) where fewer than two would."""
    try:
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        free = 0
    size = min(os.cpu_count() or 1, large, free // PROCESS_BYTES)
    return size if size > 1 else 0


class Funnels:
    """The spaces of a run's tasks: the large ones started in the pool at once, each handed
    back when asked for (`space`), the others built when asked for."""

    def __init__(self, tasks: Sequence[FunnelTask]) -> None:
        # one whose legal configurations this process holds (an earlier run in the same
        # process) is built here in seconds
        large = [t for t in dict.fromkeys(tasks) if t.combinations >= LARGE
                 and not legal_known(get_rung(t.rung), t.limits, dict(t.only))]
        size = pool_size(len(large))
        self.pool: ProcessPoolExecutor | None = None
        self.started: dict[FunnelTask, Future[SearchSpace]] = {}
        if size:
            self.pool = ProcessPoolExecutor(size, mp_context=mp.get_context("spawn"),
                                            initializer=_quiet_child)
            with holding_ctrl_c():  # the processes start as the tasks are handed out
                self.started = {t: self.pool.submit(build, t) for t in large}

    def space(self, task: FunnelTask) -> SearchSpace:
        """The task's space, waiting for the pool where it is building it."""
        started = self.started.pop(task, None)
        if started is not None:
            try:
                return started.result()
            except BrokenProcessPool:
                pass  # a process that could not start or died: built here instead
        return build(task)

    def close(self, abandon: bool = False) -> None:
        """Stop the pool. With `abandon` (a run refused or interrupted midway) its processes
        are ended at once rather than let finish spaces no one will ask for, each of which
        can take half a minute."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        if abandon:
            for process in list(getattr(pool, "_processes", {}).values()):
                process.kill()
        pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "Funnels":
        return self

    def __exit__(self, kind: type | None, *exc: object) -> None:
        self.close(abandon=kind is not None)
