"""A search's evaluations spread over the workers of a Dask cluster, one worker per device.

Only `clgemm tune --cluster` (and `clgemm.tune(cluster=...)`) imports this module, so Dask stays
an optional extra (`pip install 'clgemm[cluster]'`): without it every other command works as
before.

The driver stays the one writer. Workers build, run, check and time, each through an `Evaluator`
of its own, so a kernel that hangs or crashes still takes down only the worker's measuring
process, never the worker; each result comes back to the driver, which journals it and stores
winners exactly as a tune on one device does. The driver hands every idle worker one
configuration at a time, pinned to that worker, and keeps the queue itself, rather than leaving
retries to the scheduler: a worker that dies or leaves is noticed by its absence from the
scheduler's list, its configuration goes back to the front of the queue, and a result is
journaled once, when it arrives. A worker that comes back (a nanny restarts a killed one) is
given work again.

A worker finds its device by the model the driver tunes (the device key: backend, vendor, name,
driver): the one $CLGEMM_DEVICE names, or else the only device of that model it has. Several
GPUs of one model on one host therefore need one worker each with $CLGEMM_DEVICE set, as a local
cluster starts them. Every record names the device it ran on (host, index, and the PCI bus where
the driver tells it), and the confirmation of the winners runs on one worker alone, so that
differences between GPUs of one model do not choose them.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import socket
import threading
import time
from collections import Counter, deque
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import dask
from distributed import Client, Future, Nanny, Scheduler, SpecCluster, get_worker, wait
from distributed.comm import get_address_host

from clgemm.backends import list_devices, registry
from clgemm.core import settings
from clgemm.core.errors import ClgemmError, UsageError
from clgemm.core.problem import Problem
from clgemm.core.tables import params_text
from clgemm.devices.info import DeviceInfo, pick_device
from clgemm.tuner.settings import LOCAL
from clgemm.tuner.evaluate import Evaluator

#: seconds the driver waits for any worker of the device before it gives up on the cluster
NO_WORKER_TIMEOUT = 300.0
#: seconds between the driver's looks at which workers are still there
POLL_S = 0.5
#: seconds a scheduler's address is given to answer
CONNECT_TIMEOUT = 10
#: seconds the driver waits for the record of a task that is done: a small dict, fetched from
#: the worker that ran it. A worker killed between finishing and handing it over leaves the
#: task to be run again where only that worker may run it, which never happens; past this the
#: configuration goes back to the queue instead
RESULT_TIMEOUT = 60.0


class ClusterError(ClgemmError):
    """The cluster cannot measure: no worker has the device, or none is left."""


class _ResultLost(Exception):
    """A finished task's record did not arrive within RESULT_TIMEOUT."""


# -- on a worker ------------------------------------------------------------------------------
_LOCK = threading.Lock()
#: this worker's evaluator, kept between tasks: (what it was opened for, the evaluator)
_EVALUATOR: list[tuple[tuple, Evaluator]] = []


def worker_device(key: str) -> DeviceInfo:
    """This worker's device of the model `key`: $CLGEMM_DEVICE's, or the only one it has."""
    devices = list_devices()
    named = settings.device()
    if named is not None:
        dev = pick_device(devices, named)
        if dev.key != key:
            raise ClusterError(f"worker on {socket.gethostname()}: {settings.DEVICE}={named} "
                               f"is {dev.name} ({dev.key}), not the device tuned ({key})")
        return dev
    same = [d for d in devices if d.key == key]
    if len(same) != 1:
        have = "none" if not same else f"{len(same)} ({', '.join(str(d.index) for d in same)})"
        raise ClusterError(f"worker on {socket.gethostname()}: {have} of its devices are "
                           f"{key}; start it with {settings.DEVICE} set to the one it measures")
    return same[0]


def device_identity(dev: DeviceInfo) -> dict[str, Any]:
    """Which device a record was measured on: host, index and name, and the PCI bus where its
    backend says it (NVIDIA's OpenCL and CUDA), so that two GPUs of one model are told apart."""
    ident: dict[str, Any] = {"host": socket.gethostname(), "index": dev.index, "name": dev.name}
    bus = registry.bus_id(dev)
    if bus:
        ident["pci"] = bus
    visible = settings.cuda_visible()
    if dev.backend == "cuda" and visible:
        ident["cuda_visible_devices"] = visible
    return ident


def _may_have_children() -> None:
    """`dask worker` starts its worker processes as daemons (its default), which
    multiprocessing forbids to start children; the measuring processes are such children. The
    flag only says that the nanny may end this process without waiting for it: the measuring
    processes are daemons themselves and die with this one (`worker.die_with_parent`), so the
    worker may drop it for itself."""
    me = mp.current_process()
    if me.daemon:
        me.daemon = False


def _evaluator(dev: DeviceInfo, opened_for: tuple, builders: int) -> Evaluator:
    """This worker's evaluator for the problem and limits; one at a time (a worker measures one
    shape at a time), the one before closed. Its pool of `builders` pre-building processes is
    sized as it opens."""
    if _EVALUATOR and _EVALUATOR[0][0] == opened_for:
        return _EVALUATOR[0][1]
    _may_have_children()
    while _EVALUATOR:
        _EVALUATOR.pop()[1].close()
    _, dims, batch, seed, launch_timeout, build_timeout = opened_for
    ev = Evaluator(dev, Problem(dims[0], dims[1], dims[2], batch=batch), repeats=1, warmup=0,
                   jobs=builders, launch_timeout=launch_timeout, build_timeout=build_timeout,
                   seed=seed)
    _EVALUATOR.append((opened_for, ev))
    return ev


def builders_here(jobs: int | None, sharing: int) -> int:
    """Pre-building processes for one worker: `jobs` (None: this host's cores) shared by the
    `sharing` workers of its host, at least one unless `jobs` is 0."""
    total = (os.cpu_count() or 1) if jobs is None else jobs
    return 0 if total <= 0 else max(1, total // max(1, sharing))


def measure_task(key: str, dims: Sequence[int], batch: int, seed: int,
                 limits: tuple[float, float], ref: int | str, params: Mapping[str, int],
                 repeats: int, warmup: int, ahead: Sequence[Mapping[str, int]] = (),
                 jobs: int | None = 0, sharing: int = 1) -> dict[str, Any]:
    """One configuration measured on this worker's device: the record an `Evaluator` returns,
    and which device made it (`ran_on`). Meanwhile the worker pre-builds `ahead`, its share of
    the batch, as a tune on one device pre-builds its batch (`evaluate` says how): the on-disk
    compiler caches those builds fill belong to the host, so whichever worker of the host then
    measures one of them finds it built. Runs on a worker."""
    with _LOCK:
        dev = worker_device(key)
        ev = _evaluator(dev, (dev.index, tuple(dims), batch, seed, *limits),
                        builders_here(jobs, sharing))
        if ahead:
            ev.prebuild(ref, ahead)
        res = ev.evaluate(ref, params, repeats=repeats, warmup=warmup)
    res["ran_on"] = {**device_identity(dev), "worker": get_worker().address,
                     "pid": os.getpid()}
    return res


def measures(key: str) -> bool:
    """Whether this worker measures the device model `key` (a cluster may hold workers of
    several devices, each tuned by a driver of its own). Runs on a worker."""
    try:
        worker_device(key)
    except (ClusterError, UsageError):
        return False
    return True


# -- the cluster ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClusterSpec:
    """Where the workers are: `address` of a running scheduler, or None for a local cluster of
    `workers` workers (None: one per device of the tuned models on this machine)."""

    address: str | None = None
    workers: int | None = None

    def describe(self) -> str:
        if self.address:
            return f"the cluster at {self.address}"
        return "a local cluster"


def _quiet() -> None:
    """Dask's own log lines (a worker leaving, a nanny restarting it) are the driver's business:
    the tune says what became of each configuration itself. A worker's measuring processes are
    its children, which daemonic processes may not have."""
    dask.config.set({"distributed.worker.daemon": False,
                     "logging.distributed": "error",
                     # what a local cluster's worker reads as it starts, before any config
                     "distributed.nanny.pre-spawn-environ.DASK_LOGGING__DISTRIBUTED": "error"})
    for name in ("distributed", "distributed.nanny", "distributed.scheduler",
                 "distributed.worker", "distributed.core"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def local_cluster(devices: Sequence[DeviceInfo], workers: int) -> SpecCluster:
    """A cluster on this machine: `workers` workers, each pinned to one of `devices` in turn
    through $CLGEMM_DEVICE (more workers than devices share them: a test of the machinery)."""
    if not devices:
        raise ClusterError("a local cluster needs at least one device")
    specs = {f"clgemm-{i}": {"cls": Nanny,
                             "options": {"nthreads": 1,
                                         "env": {settings.DEVICE:
                                                 str(devices[i % len(devices)].index)},
                                         "resources": {"GPU": 1}}}
             for i in range(workers)}
    scheduler = {"cls": Scheduler, "options": {"dashboard": False, "dashboard_address": None,
                                               "host": "127.0.0.1"}}
    return SpecCluster(workers=specs, scheduler=scheduler, silence_logs=logging.CRITICAL,
                       name="clgemm")


def open_cluster(stack: ExitStack, cluster: str, workers: int | None,
                 devices: Sequence[DeviceInfo], note: Callable[[str], None]) -> Client:
    """A client on the cluster a tune's settings name (`cluster`: settings.LOCAL or a
    scheduler's address), kept open by `stack` for the whole run; a local one has a worker per
    device of `devices`' models, or `workers`."""
    spec = ClusterSpec(None if cluster == LOCAL else cluster, workers)
    client = stack.enter_context(Cluster(spec, devices)).client
    note(f"measuring on {spec.describe()}")
    return client


class Cluster:
    """A client on the cluster a spec names (a local one started and ended here)."""

    def __init__(self, spec: ClusterSpec, devices: Sequence[DeviceInfo]) -> None:
        _quiet()
        self.spec = spec
        self.local: SpecCluster | None = None
        if spec.address:
            try:
                self.client = Client(spec.address, timeout=CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise UsageError(f"--cluster {spec.address}: no scheduler answers there "
                                 f"({type(exc).__name__}: {exc})") from None
        else:
            keys = {d.key for d in devices}
            mine = [d for d in list_devices() if d.key in keys]
            self.local = local_cluster(mine, spec.workers or len(mine))
            self.client = Client(self.local)

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ClusterEvaluator:
    """An `Evaluator`'s face for a search on the cluster's workers: `evaluate_many` spreads a
    batch over every worker of the device and yields each record as it arrives; `evaluate`
    (the confirmation's) measures on one worker, the same one each time while it lives."""

    def __init__(self, client: Client, device: DeviceInfo, problem: Problem, *, repeats: int,
                 warmup: int, launch_timeout: float = 30.0, build_timeout: float = 300.0,
                 seed: int = 0, jobs: int | None = None,
                 note: Callable[[str], None] | None = None,
                 no_worker_timeout: float = NO_WORKER_TIMEOUT) -> None:
        self.client = client
        self.device = device
        self.problem = problem
        self.repeats = repeats
        self.warmup = warmup
        self.args = (device.key, tuple(problem.as_list()), problem.batch, seed,
                     (launch_timeout, build_timeout))
        #: pre-building processes of each host (None: its cores), shared by its workers
        self.jobs = jobs
        self.note = note or (lambda text: None)
        self.no_worker_timeout = no_worker_timeout
        self.confirmer: str | None = None
        #: configurations given back to the queue because their worker left
        self.requeued = 0
        #: whether each worker seen so far measures this device
        self.eligible: dict[str, bool] = {}

    # -- workers --------------------------------------------------------------------------------
    def workers(self) -> list[str]:
        """The addresses of the workers of this device there are now, in a stable order."""
        try:  # every worker: newer versions list only the first five unless asked
            info = self.client.scheduler_info(n_workers=-1)
        except TypeError:  # a version from before the limit lists them all
            info = self.client.scheduler_info()
        current = sorted(info["workers"])
        new = [a for a in current if a not in self.eligible]
        if new:
            try:
                answers = self.client.run(measures, self.device.key, workers=new,
                                          on_error="return")
            except (OSError, TimeoutError):
                answers = {}
            for address, answer in answers.items():
                if isinstance(answer, bool):
                    self.eligible[address] = answer
        return [a for a in current if self.eligible.get(a)]

    @property
    def width(self) -> int:
        """How many devices measure at once: the search proposes a batch for each."""
        return max(1, len(self.workers()))

    def _some_worker(self, deadline: float) -> list[str]:
        while True:
            current = self.workers()
            if current:
                return current
            if time.monotonic() > deadline:
                raise ClusterError(f"no worker of the cluster has been there for "
                                   f"{self.no_worker_timeout:g} s")
            time.sleep(POLL_S)

    def _submit(self, address: str, ref: int | str, params: Mapping[str, int], repeats: int,
                warmup: int, ahead: Sequence[Mapping[str, int]] = (),
                sharing: int = 1) -> Future:
        return self.client.submit(measure_task, *self.args, ref, dict(params), repeats, warmup,
                                  [dict(p) for p in ahead], self.jobs, sharing,
                                  workers=[address], allow_other_workers=False, pure=False,
                                  retries=0)

    @staticmethod
    def _result(future: Future, params: Mapping[str, int]) -> dict[str, Any]:
        """The record of a finished task. A task that raised says the worker cannot measure
        (its device is missing or not the one tuned): that stops the run, as a local
        measuring process that cannot start does."""
        if future.status == "error":
            exc = future.exception()
            raise ClusterError(f"a worker could not measure: {exc}")
        try:
            res = dict(future.result(timeout=RESULT_TIMEOUT))
        except TimeoutError as exc:
            future.cancel()
            raise _ResultLost from exc
        res["params"] = dict(params)
        return res

    def _arrived(self, future: Future, params: Mapping[str, int]) -> dict[str, Any] | None:
        """The record of a done task; None where it is to be measured again: the scheduler
        cancelled it, or its worker left before handing the record over (`_ResultLost`)."""
        if future.status == "cancelled":
            return None
        try:
            return self._result(future, params)
        except _ResultLost:
            return None

    # -- the Evaluator's face -----------------------------------------------------------------
    def prebuild(self, ref: int | str, configs: Sequence[Mapping[str, int]]) -> None:
        """Nothing here: `evaluate_many` hands each worker its share of the batch to pre-build
        with its first configuration."""

    def evaluate_many(self, ref: int | str, configs: Sequence[Mapping[str, int]],
                      stop: Callable[[], bool] = lambda: False
                      ) -> Iterator[dict[str, Any]]:
        """Every configuration measured once on some worker, each record as it arrives; once
        `stop` says so, nothing more is started and what is under way is waited for."""
        queue: deque[dict[str, int]] = deque(dict(p) for p in configs)
        running: dict[Future, tuple[dict[str, int], str]] = {}
        # each worker's share of the batch, pre-built by it as it measures the first and then
        # measured by it, unless another worker runs out of its own first; each host's cores
        # shared by its workers
        workers = self.workers()
        shares = {address: [dict(configs[i]) for i in range(k, len(configs), len(workers))]
                  for k, address in enumerate(workers)}
        told: set[str] = set()
        hosts = Counter(get_address_host(a) for a in workers)

        def take(address: str) -> tuple[dict[str, int], list[dict[str, int]]]:
            """The worker's next configuration (its own share's first, else the last of the
            queue, the one furthest from its own worker) and, the first time, what it is to
            pre-build."""
            own = [p for p in shares.get(address, []) if p in queue]
            params = own[0] if own else queue[-1]
            queue.remove(params)
            ahead = [] if address in told else own[1:]
            told.add(address)
            return params, ahead

        def give_back(future: Future) -> None:
            params, address = running.pop(future)
            queue.appendleft(params)
            self.requeued += 1
            self.note(f"worker {address} left with {params_text(params)} under way: it goes "
                      f"back to the queue")

        deadline = time.monotonic() + self.no_worker_timeout
        while running or (queue and not stop()):
            # with nothing under way, wait (bounded) for a worker; else take who is there
            current = self.workers() if running else self._some_worker(deadline)
            if current:
                deadline = time.monotonic() + self.no_worker_timeout
            busy = {address for _, address in running.values()}
            for address in current:
                if address not in busy and queue and not stop():
                    params, ahead = take(address)
                    running[self._submit(address, ref, params, self.repeats, self.warmup,
                                         ahead, hosts[get_address_host(address)] or 1)
                            ] = (params, address)
            for future, (_, address) in list(running.items()):
                if address not in current:  # the worker left: its configuration goes back
                    future.cancel()
                    give_back(future)
            for future in _finished(list(running)) if running else []:
                record = self._arrived(future, running[future][0])
                if record is None:
                    give_back(future)
                    continue
                running.pop(future)
                yield record

    def evaluate(self, ref: int | str, params: Mapping[str, int], repeats: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]:
        """One configuration on the confirming worker (the first there was, while it lives)."""
        deadline = time.monotonic() + self.no_worker_timeout
        while True:
            current = self._some_worker(deadline)
            if self.confirmer not in current:
                if self.confirmer is not None:
                    self.note(f"worker {self.confirmer} left: the confirmation goes on on "
                              f"{current[0]}")
                self.confirmer = current[0]
            future = self._submit(self.confirmer, ref, params,
                                  self.repeats if repeats is None else repeats,
                                  self.warmup if warmup is None else warmup)
            while True:
                if _finished([future]):
                    break
                if self.confirmer not in self.workers():
                    future.cancel()
                    break
            if future.status in ("finished", "error"):
                record = self._arrived(future, params)
                if record is not None:
                    return record

    def close(self) -> None:
        """The workers keep their measuring processes for the next shape; nothing to end."""

    def __enter__(self) -> "ClusterEvaluator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _finished(futures: list[Future]) -> list[Future]:
    """The futures done within a poll's time (none: an empty list, where Dask's `wait` raises)."""
    try:
        done, _ = wait(futures, timeout=POLL_S, return_when="FIRST_COMPLETED")
    except TimeoutError:
        return []
    return list(done)
