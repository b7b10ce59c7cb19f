"""Evaluating configurations safely, with compilation overlapped with measurement.

Isolation: every measurement runs in a separate worker process (`worker.measure_main`). The
parent holds each phase to a time limit (the build, each launch, the host work between) and,
when one is exceeded, kills the worker, records the configuration as "timeout" and starts a new
worker for the next one. A worker that dies on its own (a driver crash) is recorded as "crashed".
After a failure that may leave the driver in a bad state (launch failures, timeouts, crashes)
the worker is also replaced, so one bad kernel cannot spoil the measurements after it.

Overlap: a pool of `jobs` pre-building processes (default: one per core) compiles the batch of
configurations the strategy proposed while the worker measures the ones before. Each pre-build
builds the configuration and launches it once on the smallest problem it can do, which fills the
driver's on-disk compiler cache that the worker's own build then hits: on PoCL both the
front-end compile (`clBuildProgram`, which pyopencl leaves to PoCL's kernel cache there) and the
per-local-size code generation done at the first launch; on other drivers their own caches
(NVIDIA's compute cache, or pyopencl's binary cache where the driver has none). On a CPU a
build costs far more than a measurement, so pre-building is most of a tune's speed there
(docs/measurements.md). On a CPU device the worker holds the builders still while it times (see `worker`).
The worker never receives anything from the pool and always builds for itself, so the results
cannot depend on the pre-builds: if a pre-build fails, hangs or is not done in time, the worker
just compiles from scratch. Pre-builds that are queued but not started when the worker reaches
their configuration are dropped rather than duplicated; one in progress is waited for, since it
will finish sooner than a second compile started from nothing.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import resource_tracker
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from clgemm.core.errors import ClgemmError, UsageError
from clgemm.core.problem import Problem
from clgemm.devices.info import DeviceInfo
from clgemm.tuner import worker as _worker

class Measurer(Protocol):
    """What a search drives: an `Evaluator` on this machine, or a cluster's evaluator
    (`cluster.ClusterEvaluator`) that measures on many devices at once. Two more members are
    optional (`measure_many` reads them): `width`, how many configurations it measures at once
    (1 where absent), and `evaluate_many`, a batch measured in any order (absent: one
    `evaluate` after the other)."""

    def prebuild(self, ref: int | str, configs: Sequence[Mapping[str, int]]) -> None: ...

    def evaluate(self, ref: int | str, params: Mapping[str, int], repeats: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]: ...


def measure_many(evaluator: Measurer, ref: int | str, configs: Sequence[Mapping[str, int]],
                 stop: Callable[[], bool]) -> Iterator[dict[str, Any]]:
    """Each configuration's record (its `params` among its keys, which say which one it is:
    a batch may come back in any order), through the evaluator's `evaluate_many` where it has
    one, else one `evaluate` after the other, until `stop` says no more is to be started."""
    many = getattr(evaluator, "evaluate_many", None)
    if many is not None:
        yield from many(ref, configs, stop)
        return
    for params in configs:
        if stop():
            return
        yield {"params": dict(params), **evaluator.evaluate(ref, params)}


#: statuses after which the measuring worker is replaced before the next configuration
RESTART_AFTER = frozenset({"timeout", "crashed", "failed", "launch-failed"})


def _tag(problem: Problem, ref: int | str, params: Mapping[str, int]) -> tuple:
    """A pre-build's name: its configuration and the problem it is built for, since what a
    configuration compiles can depend on the problem (K in slices, B read as it lies)."""
    return (problem.as_tuple(), problem.batch, str(ref), tuple(sorted(params.items())))


@contextmanager
def holding_ctrl_c() -> Iterator[None]:
    """Start children inside this so that they cannot take SIGINT from their first
    instruction, without losing a Ctrl-C meant for the parent. Ctrl-C reaches the whole
    process group, and a child that took it, even while still importing (before its main can
    say so, `worker.ignore_ctrl_c`), would print a traceback of its own; the parent alone
    decides what an interrupt means.

    The starting thread blocks SIGINT meanwhile: a child begins with the signal mask of the
    thread that started it (multiprocessing's fork-and-exec keeps it across exec), so the
    child's Python holds any SIGINT unseen until `ignore_ctrl_c` ignores it for good. The
    parent meanwhile only notes a Ctrl-C (another of its threads, a driver's, may take it)
    and acts on it once the children are fully started: an interrupt in the middle of a start
    would leave a child waiting for what the parent never sent, and complaining. Ignoring
    SIGINT in the parent instead would drop a Ctrl-C that the kernel hands to one of those
    other threads. multiprocessing's resource tracker is started first: starting it unblocks
    SIGINT in the starting thread, which inside the block would start the child with SIGINT
    open after all."""
    if not hasattr(signal, "pthread_sigmask"):  # no POSIX signal masks: nothing to hold
        yield
        return
    resource_tracker.ensure_running()
    main = threading.current_thread() is threading.main_thread()
    pressed: list[int] = []
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    old = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum)) \
        if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, signal.default_int_handler if old is None else old)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
    if pressed:
        signal.raise_signal(signal.SIGINT)  # now, to whatever the parent does with it


def _refuse_script_rerun(child: "_Child") -> None:
    """A child that ended because it found itself calling clgemm.tune() while it started
    means the caller's script lacks its main guard: no child of this run can ever start, so
    the run stops with that, not with a timeout or a crash of its own."""
    if child.proc.exitcode == _worker.SCRIPT_RERUN_EXIT:
        raise UsageError(_worker.script_rerun_message()) from None


class _Child:
    """A spawned child process and the parent's end of its pipe."""

    def __init__(self, ctx, target, args: tuple):
        parent_end, child_end = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=target, args=(child_end, *args), daemon=True)
        self.conn = parent_end
        self.ready = False
        try:
            with holding_ctrl_c():
                self.proc.start()
        except BaseException:  # a Ctrl-C held back during the start arrives as it ends
            if self.proc.pid is not None:
                self.kill()
            child_end.close()
            parent_end.close()
            raise
        child_end.close()

    @property
    def pid(self) -> int | None:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.is_alive()

    def kill(self) -> None:
        try:
            self.proc.kill()
        except (OSError, AttributeError, ValueError):
            pass
        self.proc.join(timeout=10)
        try:
            self.conn.close()
        except OSError:
            pass

    def stop(self) -> None:
        try:
            self.conn.send(("stop",))
        except (OSError, ValueError):
            pass
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.kill()
        else:
            self.conn.close()


@dataclass
class _Slot:
    child: _Child | None = None
    tag: tuple | None = None
    deadline: float = 0.0


class BuildPool:
    """Pre-building processes fed from a queue; every method returns without blocking on a
    child except `wait_for`, which is bounded by the phase limits."""

    def __init__(self, ctx, device: DeviceInfo, problem: Problem, jobs: int,
                 limits: Mapping[str, float]):
        self.ctx = ctx
        self.device = device
        self.problem = problem
        self.slots = [_Slot() for _ in range(jobs)]
        # The "host" phase of a builder includes starting the process and opening the device.
        self.limits = {**limits, "host": max(limits["build"], 60.0)}
        self.queue: deque[tuple[tuple, int | str, dict]] = deque()
        self.state: dict[tuple, str] = {}
        self.fatal = 0

    @property
    def enabled(self) -> bool:
        # Builders that cannot even open the device (three times) are given up on, quietly:
        # the worker builds everything itself then.
        return bool(self.slots) and self.fatal < 3

    def submit(self, ref: int | str, configs: Sequence[Mapping[str, int]]) -> None:
        if not self.enabled:
            return
        for params in configs:
            tag = _tag(self.problem, ref, params)
            if tag not in self.state:
                self.state[tag] = "queued"
                self.queue.append((tag, ref, dict(params)))
        self.pump()

    def retarget(self, problem: Problem) -> None:
        """Pre-build for `problem` from now on: what is queued for the last one is dropped,
        and a pre-build in progress finishes under its own problem's name."""
        for tag, _, _ in self.queue:
            self.state[tag] = "dropped"
        self.queue.clear()
        self.problem = problem

    def pids(self) -> list[int]:
        return [s.child.pid for s in self.slots if s.child is not None and s.child.pid]

    def resume_all(self) -> None:
        """SIGCONT every builder: the worker stops them during launches and may have been
        killed before it could let them go."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass

    def _drop(self, slot: _Slot, outcome: str) -> None:
        if slot.tag is not None:
            self.state[slot.tag] = outcome
        child, slot.child, slot.tag = slot.child, None, None
        if child is not None:
            child.kill()
            _refuse_script_rerun(child)

    def pump(self) -> None:
        """Collect finished pre-builds, kill stuck builders, hand queued work to idle ones."""
        now = time.monotonic()
        for slot in self.slots:
            child = slot.child
            if child is None:
                continue
            try:
                while child.conn.poll():
                    msg = child.conn.recv()
                    if msg[0] == "ready":
                        child.ready = True
                    elif msg[0] == "phase":
                        slot.deadline = now + self.limits.get(msg[1], self.limits["host"])
                    elif msg[0] == "fatal":
                        self.fatal += 1
                        self._drop(slot, "failed")
                        break
                    elif msg[0] == "done":
                        self.state[msg[1]] = f"done:{msg[2]}"
                        slot.tag = None
            except (EOFError, OSError):
                self._drop(slot, "failed")
                continue
            if slot.child is not None and slot.tag is not None:
                if now > slot.deadline or not slot.child.alive():
                    self._drop(slot, "timeout")
        if not self.enabled:
            return
        for slot in self.slots:
            if slot.tag is not None or not self.queue:
                continue
            tag, ref, params = self.queue.popleft()
            if slot.child is None or not slot.child.alive():
                slot.child = _Child(self.ctx, _worker.build_main,
                                    (self.device.index, self.device.key))
            try:
                slot.child.conn.send(("warm", tag, ref, params, self.problem))
            except (OSError, ValueError):
                self._drop(slot, "failed")
                continue
            slot.tag, slot.deadline = tag, time.monotonic() + self.limits["host"]
            self.state[tag] = "building"

    def wait_for(self, ref: int | str, params: Mapping[str, int]) -> str:
        """Make way for the worker to measure this configuration: drop it from the queue if no
        builder has started it, wait (bounded) if one has. Returns what became of it."""
        tag = _tag(self.problem, ref, params)
        state = self.state.get(tag, "unknown")
        if state == "queued":
            self.queue = deque(q for q in self.queue if q[0] != tag)
            self.state[tag] = "dropped"
            return "dropped"
        while state == "building":
            slot = next((s for s in self.slots if s.tag == tag), None)
            if slot is None or slot.child is None:
                break
            slot.child.conn.poll(0.05)
            self.pump()
            state = self.state.get(tag, "unknown")
        return state

    def close(self) -> None:
        """Idle builders are asked to stop; busy ones (an interrupted run) are killed, since
        nothing they would finish is wanted any more."""
        self.resume_all()
        for slot in self.slots:
            if slot.child is not None:
                if slot.tag is not None:
                    slot.child.kill()
                else:
                    slot.child.stop()
                slot.child, slot.tag = None, None


class Evaluator:
    """Measures configurations of one problem on one device, one at a time, never trusting a
    kernel to finish or to leave the process usable."""

    def __init__(self, device: DeviceInfo, problem: Problem, *, repeats: int, warmup: int,
                 jobs: int = 0, launch_timeout: float = 30.0, build_timeout: float = 300.0,
                 host_timeout: float = 600.0, start_timeout: float = 900.0, seed: int = 0,
                 quiet_builders: bool | None = None):
        self.device = device
        self.problem = problem
        self.repeats = repeats
        self.warmup = warmup
        self.limits = {"build": build_timeout, "launch": launch_timeout, "host": host_timeout}
        self.start_timeout = start_timeout
        self.seed = seed
        self.ctx = mp.get_context("spawn")
        self.worker: _Child | None = None
        self.pool = (BuildPool(self.ctx, device, problem, jobs, self.limits) if jobs > 0
                     else None)
        # Builders share a CPU device's cores: the worker holds them still while it times.
        self.quiet_builders = device.is_cpu if quiet_builders is None else quiet_builders
        self.restarts = 0

    @property
    def builders(self) -> int:
        """How many configurations can be built at once ahead of their measurement."""
        return len(self.pool.slots) if self.pool is not None and self.pool.enabled else 0

    # -- the measuring worker -----------------------------------------------------------------
    def _start_worker(self) -> None:
        child = _Child(self.ctx, _worker.measure_main,
                       (self.device.index, self.device.key, self._size(), self.seed))
        self.worker = self._ready(child, "could not start")

    def _size(self) -> tuple[int, int, int, int]:
        p = self.problem
        return (p.m, p.n, p.k, p.batch)

    def _ready(self, child: _Child, failed: str) -> _Child:
        """The measuring process once it says it is ready (its workspace made and the float64
        reference computed); killed, and the run stopped, if it fails, dies or takes longer
        than the start's limit. The builders are served meanwhile."""
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if child.conn.poll(0.2):
                try:
                    msg = child.conn.recv()
                except (EOFError, OSError):
                    break
                if msg[0] == "ready":
                    return child
                child.kill()
                raise ClgemmError(f"the measuring process {failed}: {msg[1]}")
            if not child.alive():
                break
            if self.pool:
                try:
                    self.pool.pump()
                except BaseException:  # a builder's end that ends the run ends this child too
                    child.kill()
                    raise
        child.kill()
        _refuse_script_rerun(child)
        raise ClgemmError(f"the measuring process {failed} (it died or took longer "
                          f"than {self.start_timeout:g} s)")

    def retarget(self, problem: Problem) -> None:
        """Measure `problem` from now on, in the processes already running: a run of several
        shapes starts its measuring process and its builders once, not once a shape (starting
        them, each opening the device, is seconds on a GPU host). The worker makes the new
        problem's workspace now, before the search asks for its first configuration."""
        if problem == self.problem:
            return
        self.problem = problem
        if self.pool:
            self.pool.retarget(problem)
        worker, self.worker = self.worker, None
        if worker is None or not worker.alive():
            return
        try:
            worker.conn.send(("problem", self._size()))
        except (OSError, ValueError):
            worker.kill()
            return
        self.worker = self._ready(worker, f"could not take {problem.label}")

    def _kill_worker(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
            self.restarts += 1
        if self.pool:
            self.pool.resume_all()

    def prebuild(self, ref: int | str, configs: Sequence[Mapping[str, int]]) -> None:
        """Queue configurations for pre-building (a no-op without a pool)."""
        if self.pool:
            self.pool.submit(ref, configs)

    def evaluate(self, ref: int | str, params: Mapping[str, int], repeats: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]:
        """Measure one configuration; always returns a record (status says what happened)."""
        t0 = time.perf_counter()
        prebuilt = self.pool.wait_for(ref, params) if self.pool else "off"
        if self.worker is None or not self.worker.alive():
            self.worker = None
            self._start_worker()
        quiet = self.pool.pids() if (self.pool and self.quiet_builders) else []
        task = ("run", ref, dict(params), self.repeats if repeats is None else repeats,
                self.warmup if warmup is None else warmup, quiet)
        assert self.worker is not None
        conn = self.worker.conn
        phase = "host"
        deadline = time.monotonic() + self.limits[phase]
        try:
            conn.send(task)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    self._kill_worker()
                    return self._failure(params, "timeout", f"{phase} did not finish within "
                                         f"{self.limits[phase]:g} s; worker killed", t0, prebuilt)
                if conn.poll(min(left, 0.05 if self.pool else 0.5)):
                    msg = conn.recv()
                    if msg[0] == "phase":
                        phase = msg[1]
                        deadline = time.monotonic() + self.limits[phase]
                    elif msg[0] == "result":
                        res = dict(msg[1])
                        res["params"] = dict(params)
                        res.setdefault("eval_s", time.perf_counter() - t0)
                        res["prebuilt"] = prebuilt
                        if res.get("status") in RESTART_AFTER:
                            self._kill_worker()
                        return res
                elif not self.worker.alive():
                    raise EOFError
                if self.pool:
                    self.pool.pump()
        except (EOFError, OSError, BrokenPipeError):
            code = None
            if self.worker is not None:
                self.worker.proc.join(timeout=2)  # the pipe closes a moment before the exit
                code = self.worker.proc.exitcode
            self._kill_worker()
            how = (f"signal {-code}" if code is not None and code < 0 else f"exit code {code}")
            return self._failure(params, "crashed", f"worker died during {phase} ({how})", t0,
                                 prebuilt)

    @staticmethod
    def _failure(params: Mapping[str, int], status: str, message: str, t0: float,
                 prebuilt: str) -> dict[str, Any]:
        return {"params": dict(params), "status": status, "message": message, "ms": None,
                "gflops": None, "rel_error": None, "times_ms": [],
                "eval_s": time.perf_counter() - t0, "prebuilt": prebuilt}

    def close(self) -> None:
        if self.pool:
            self.pool.close()
        if self.worker is not None:
            self.worker.stop()
            self.worker = None

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
