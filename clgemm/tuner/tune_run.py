"""A whole tuning run, from the rungs and shapes asked for to the configurations stored: the
part that `clgemm tune` and `clgemm.tune` share, so the command and a Python program tune the
same way.

A `Tuning` takes the run's `TuneSettings` (checked when they were made) and a `TuneReport` (how
the run tells what it does) and does the rest in order: it opens the device and plans the steps
(`plan_steps`: a plain request becomes the bounded plan of `plan.py`), prepares every shape's
spaces and checks every journal before anything is measured (`TuneRun.prepare`), loads the
database and checks that it can be written, measures (`TuneRun.measure`, storing each winner as
soon as it is known) and returns a `TuneResult`: per rung and shape the configuration the
database now holds, and the files that hold it. The command and the Python entry point differ
only in their settings' wording and in their report; neither decides anything the other does
not. `tune` is the Python entry point.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TextIO

from clgemm.backends import registry
from clgemm.configs.configuration import Config
from clgemm.configs.database import Database, load, results_dir
from clgemm.core.errors import UsageError
from clgemm.core.paths import check_writable
from clgemm.core.problem import Problem
from clgemm.core.tables import FULL, Layout
from clgemm.devices.info import DeviceInfo
from clgemm.library import gemm as api
from clgemm.measure.ladder import default_repeats, default_size
from clgemm.rungs import ALL_RUNGS, GEMM_RUNGS, get_rung
from clgemm.tuner.evaluate import Evaluator
from clgemm.tuner.journal import PYTHON, Wording
from clgemm.tuner.plan import TuneStep, bounded_steps, default_plan, plan_table, share_of
from clgemm.tuner.rung_tune import RungOutcome, TuneOptions
from clgemm.tuner.settings import TuneSettings
from clgemm.tuner.funnels import Funnels
from clgemm.tuner.shape_tune import (OpenEvaluator, PreparedShape, funnel_task, prepare_shape,
                                     run_shape, summary_table, units)
from clgemm.tuner.worker import SCRIPT_RERUN_EXIT, starting_child

Shape = tuple[int, ...]
#: the kernels a stack of products can be tuned on: those with a batched form
STACK_RUNGS = tuple(n for n in sorted(ALL_RUNGS) if ALL_RUNGS[n].stack_args is not None)
Say = Callable[[str], None]


def plan_steps(device: DeviceInfo, rungs: Sequence[int] | None,
               problems: Sequence[Problem] | None, bounded: bool,
               time_s: float | None = None) -> list[TuneStep]:
    """The steps of a run. `bounded` (no evaluation budget, time or exhaustive search asked
    for): the plain tune's plan when neither rungs nor shapes are given, else the plan's time
    for each chosen rung at each chosen shape; otherwise every chosen rung (default: the ones
    gemm() runs) at every shape (default: the ladder's size), each limited by `time_s`."""
    default_shape = Problem(*(default_size(device),) * 3)
    if bounded and rungs is None and problems is None:
        return default_plan(device)
    steps: list[TuneStep] = []
    for p in problems or [default_shape]:
        # A stack is tuned on the kernels with a batched form, those gemm() runs stacks on.
        chosen = list(rungs or (STACK_RUNGS if p.batch > 1 else GEMM_RUNGS))
        if p.batch > 1:
            unfit = [n for n in chosen if get_rung(n).stack_args is None]
            if unfit:
                raise UsageError(f"{p.label}: a stack of products is tuned on "
                                 f"{', '.join(get_rung(n).slug for n in STACK_RUNGS)} only, "
                                 f"not rung {', '.join(map(str, unfit))}")
        shape = tuple(p.dims())
        steps += (bounded_steps(device, chosen, [shape]) if bounded
                  else [TuneStep(n, shape, time_s or 0.0) for n in chosen])
    return steps


@dataclass
class TuneResult:
    """What a run left behind: per (rung, shape), the configuration the database holds for
    that slot after the run (the new winner, or an earlier faster one that it did not beat),
    the database file and the journals, and every rung's outcome for the summary table."""

    device: DeviceInfo
    database: Path
    journals: list[Path]
    outcomes: list[tuple[Shape, RungOutcome]]
    configs: dict[tuple[int, Shape], Config] = field(default_factory=dict)

    def table(self) -> str:
        """Every rung's outcome against its defaults, as `clgemm tune` prints it at the end."""
        return summary_table([o for _, o in self.outcomes])

    def __repr__(self) -> str:
        return (f"TuneResult(device={self.device.name!r}, database={str(self.database)!r}, "
                f"configs={len(self.configs)}, outcomes={len(self.outcomes)})")


@dataclass
class TuneRun:
    """A run as `Tuning.plan` makes it, everything it needs besides its database: the device,
    the steps, the search options and the measuring settings (None: the device type's repeats
    and warm-up, one pre-building process per core). `fresh` moves existing journals aside
    instead of reusing them; `wording` is how messages name the caller's choices (options or
    keywords)."""

    device: DeviceInfo
    steps: list[TuneStep]
    bounded: bool
    options: TuneOptions
    only: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    repeats: int | None = None
    warmup: int | None = None
    jobs: int | None = None
    fresh: bool = False
    journal_file: Path | None = None
    launch_timeout: float = 30.0
    build_timeout: float = 300.0
    command: str = ""
    wording: Wording = PYTHON
    #: the Dask cluster to measure on (settings.LOCAL or an address), and a local one's workers
    cluster: str | None = None
    workers: int | None = None
    #: the client of a cluster opened for several runs at once (None: this run opens its own)
    client: Any = None

    def __post_init__(self) -> None:
        # `jobs` stays as given: on a cluster, None leaves each host its own cores
        self.repeats, self.warmup, _ = self._settings()
        if self.journal_file and len(units(self.steps)) > 1:
            raise UsageError(f"{self.wording.name('journal')} holds one shape: give one shape "
                             f"with it")

    def _settings(self) -> tuple[int, int, int]:
        """Repeats, warm-up and pre-building processes, each None given its default here, so
        that the fields (public, so settable after construction) never reach a shape as None."""
        dw, dr = default_repeats(self.device)
        return (dr if self.repeats is None else self.repeats,
                dw if self.warmup is None else self.warmup,
                (os.cpu_count() or 1) if self.jobs is None else self.jobs)

    def prepare(self, results: Path, say: Say, note: Say,
                layout: Layout = FULL) -> list[PreparedShape]:
        """Every shape's spaces, funnels (to `say`, laid out by `layout`) and journal checks
        (warnings to `note`), before anything is measured."""
        repeats, warmup, _ = self._settings()
        shapes = units(self.steps)
        tasks = [funnel_task(self.device, get_rung(s.rung), problem, self.options, self.only)
                 for problem, steps in shapes for s in steps]
        with Funnels(tasks) as funnels:
            return [prepare_shape(self.device, problem, steps, self.options, dict(self.only),
                                  self.bounded, self.journal_file, results, repeats,
                                  warmup, self.command, self.fresh, say=say, note=note,
                                  layout=layout, wording=self.wording, funnels=funnels)
                    for problem, steps in shapes]

    def measure(self, prepared: Sequence[PreparedShape], db: Database, note: Say,
                stream: TextIO | None = None) -> TuneResult:
        """Measure the prepared shapes one after the other, storing each rung's winner in `db`
        as soon as it is known; progress lines go to `stream` (default stderr)."""
        outcomes: list[tuple[Shape, RungOutcome]] = []
        repeats, warmup, jobs = self._settings()
        with ExitStack() as stack:
            if self.cluster is not None:
                open_evaluator = self._on_cluster(stack, repeats, warmup, note)
            elif prepared:
                open_evaluator = self._on_this_machine(stack, prepared[0].problem, repeats,
                                                       warmup, jobs)
            for shape in prepared:
                done = run_shape(self.device, shape, self.options, self.bounded, db,
                                 self.fresh, self.command, repeats, warmup, jobs,
                                 self.launch_timeout, self.build_timeout, note=note,
                                 stream=stream, wording=self.wording,
                                 open_evaluator=open_evaluator)
                outcomes += [(tuple(shape.problem.dims()), o) for o in done]
        journals = [path for shape in prepared for path, _ in shape.journals]
        return TuneResult(self.device, db.path, journals, outcomes,
                          stored_by_slot(db, [(o.rung, s) for s, o in outcomes]))


    def _on_this_machine(self, stack: ExitStack, first: Problem, repeats: int, warmup: int,
                         jobs: int) -> OpenEvaluator:
        """One evaluator for the whole run (kept open by `stack`), and how each shape gets it:
        turned to the shape's problem, its measuring process and builders kept."""
        evaluator = stack.enter_context(Evaluator(
            self.device, first, repeats=repeats, warmup=warmup, jobs=jobs,
            launch_timeout=self.launch_timeout, build_timeout=self.build_timeout, seed=0))

        @contextmanager
        def open_evaluator(problem: Problem) -> Iterator[Evaluator]:
            evaluator.retarget(problem)
            yield evaluator
        return open_evaluator

    def _on_cluster(self, stack: ExitStack, repeats: int, warmup: int,
                    note: Say) -> OpenEvaluator:
        """The cluster opened (a local one started) for the whole run, and how each shape gets
        its evaluator there."""
        cluster = cluster_module(self.wording)
        client = self.client
        if client is None:
            client = cluster.open_cluster(stack, self.cluster, self.workers, [self.device], note)

        def open_evaluator(problem: Problem) -> Any:
            return cluster.ClusterEvaluator(client, self.device, problem, repeats=repeats,
                                            warmup=warmup, launch_timeout=self.launch_timeout,
                                            build_timeout=self.build_timeout,
                                            jobs=self.jobs, note=note)
        return open_evaluator


def cluster_module(wording: Wording) -> Any:
    """`clgemm.tuner.cluster`, which imports Dask: here and nowhere else, since Dask is an
    optional extra; a run that asks for a cluster without it is refused before anything is
    planned."""
    try:
        return importlib.import_module("clgemm.tuner.cluster")
    except ImportError as exc:
        raise UsageError(f"{wording.name('cluster')} needs Dask, which is not installed "
                         f"({exc}): pip install 'clgemm[cluster]'") from None


def stored_by_slot(db: Database, slots: Iterable[tuple[int, Shape]]
                   ) -> dict[tuple[int, Shape], Config]:
    """The database's configuration for each (rung, shape) slot that holds one."""
    out: dict[tuple[int, Shape], Config] = {}
    for number, shape in slots:
        problem = Problem.of(shape)
        entry = next((e for e in db.entries if e.rung == number and e.backend == db.backend
                      and tuple(e.shape) == problem.as_tuple() and e.batch == problem.batch),
                     None)
        if entry is not None:
            out[(number, shape)] = Config(number, dict(entry.params), "tuned")
    return out




# -- the whole run ----------------------------------------------------------------------------
class TuneReport:
    """How a run tells what it does: the funnels and the summary through `say`, progress and
    warnings through `note`, the measuring progress lines to `stream` (None: stderr), and a
    hook at each stage. This one is `clgemm.tune()`'s: with `verbose` the report on stdout
    and the rest on stderr, without it nothing at all; the command has one of its own."""

    layout: Layout = FULL

    def __init__(self, verbose: bool = True) -> None:
        self.verbose = verbose
        self.stream: TextIO | None = None if verbose else io.StringIO()

    def say(self, text: str) -> None:
        if self.verbose:
            print(text)

    def note(self, text: str) -> None:
        if self.verbose:
            print(text, file=sys.stderr)

    def planned(self, run: TuneRun) -> None:
        """The device, and the plan where the run is bounded, before anything is prepared."""
        self.say(device_line(run.device))
        if run.bounded:
            self.say(plan_table(run.device, run.steps, self.layout))

    def prepared(self, run: TuneRun, shapes: Sequence[PreparedShape]) -> None:
        """Every shape prepared (its funnels said already), nothing measured yet."""

    def finished(self, result: TuneResult) -> None:
        """The summary, once everything is measured and stored."""
        if result.outcomes:
            self.say("")
            self.say(result.table())
            self.say(f"\ndatabase: {result.database}")


def device_line(device: DeviceInfo) -> str:
    """The line a run starts with: which device it tunes."""
    return (f"tuning on device {device.index}: {device.name} ({device.platform}, driver "
            f"{device.driver_version})")


class Tuning:
    """One tune from its settings to the configurations stored: the device opened and the run
    planned, every shape prepared (and every mistake refused) before anything is measured, the
    database loaded and checked, then every shape measured, each winner saved as soon as it is
    known. What it tells goes through `report`."""

    def __init__(self, settings: TuneSettings, report: TuneReport | None = None,
                 client: Any = None) -> None:
        self.settings = settings
        self.report = report if report is not None else TuneReport(verbose=False)
        #: a cluster's client shared with other tunings (`every_device`), else None
        self.client = client

    def plan(self) -> TuneRun:
        """The device opened and the steps planned; a parameter of `only` that none of the
        planned rungs has is refused here, before anything is prepared."""
        s = self.settings
        if s.cluster is not None:
            cluster_module(s.wording)
        device = registry.device_info(s.device, s.backend)
        steps = plan_steps(device, s.rungs, s.shapes, s.bounded, s.seconds)
        # the whole run's rungs: a share without one of them is no mistake of the caller's
        only = s.only_among(sorted({step.rung for step in steps}))
        if s.share is not None:
            everything, steps = steps, share_of(steps, *s.share)
            if not steps:
                self.report.note(f"nothing of its own to measure: the run's "
                                 f"{len(everything)} step(s) went to the identical devices "
                                 f"tuned with it")
        return TuneRun(device, steps, s.bounded, s.options(), only, s.repeats, s.warmup,
                       s.jobs, s.fresh, s.journal, s.launch_timeout, s.build_timeout,
                       s.command, s.wording, s.cluster, s.workers, self.client)

    def prepare(self) -> tuple[TuneRun, list[PreparedShape]]:
        """The run planned and every shape prepared, nothing measured: all a dry run does."""
        run = self.plan()
        return run, self._prepared(run)

    def _prepared(self, run: TuneRun) -> list[PreparedShape]:
        self.report.planned(run)
        results = self.settings.results or results_dir()
        prepared = run.prepare(results, say=self.report.say, note=self.report.note,
                               layout=self.report.layout)
        self.report.prepared(run, prepared)
        return prepared

    def database(self, device: DeviceInfo) -> Database:
        """The database the winners go to, refused now if it could not be written."""
        path = self.settings.database
        db = load(device, path)
        check_writable(self.settings.wording.name("database") if path else "tuning database",
                       db.path)
        return db

    def run(self) -> TuneResult:
        """The whole run: prepared, measured, stored; what it stored returned."""
        with ExitStack() as stack:
            run = self.plan()
            if run.cluster is not None and run.client is None:
                run.client, prepared = self._prepared_while_opening(stack, run)
            else:
                prepared = self._prepared(run)
            result = run.measure(prepared, self.database(run.device), note=self.report.note,
                                 stream=self.report.stream)
        api.clear_caches()  # the choices gemm() remembered predate what was just stored
        self.report.finished(result)
        return result

    def _prepared_while_opening(self, stack: ExitStack,
                                run: TuneRun) -> tuple[Any, list[PreparedShape]]:
        """The run's cluster opened (kept open by `stack`) while its shapes are prepared: the
        workers start in processes of their own while the funnels, the tiled kernel's above
        all, take this one's time. Its note waits for the funnels' tables."""
        notes: list[str] = []
        with ThreadPoolExecutor(1) as pool:  # leaving it waits for the cluster, come what may
            opening = pool.submit(cluster_module(run.wording).open_cluster, stack, run.cluster,
                                  run.workers, [run.device], notes.append)
            prepared = self._prepared(run)
        client = opening.result()
        for text in notes:
            self.report.note(text)
        return client, prepared


# -- every device at once ----------------------------------------------------------------------
#: `--device`'s value for every device of the machine
ALL = "all"


def every_device(backend: str | None) -> list[DeviceInfo]:
    """The devices `--device all` tunes: every one listed, or every one of `backend`."""
    found = [d for d in registry.list_devices() if backend is None or d.backend == backend]
    if not found:
        raise UsageError("--device all: no device found" + (f" on the {backend} backend"
                                                            if backend else ""))
    return found


def identical_shares(devices: Sequence[DeviceInfo]) -> dict[int, tuple[int, int]]:
    """Device index -> (part, parts) for devices identical to another of `devices` (the same
    key: one database, one set of journals), which share a run's steps between them; a device
    with no twin is absent and tunes everything."""
    groups: dict[str, list[DeviceInfo]] = {}
    for dev in devices:
        groups.setdefault(dev.key, []).append(dev)
    return {dev.index: (part, len(group)) for group in groups.values() if len(group) > 1
            for part, dev in enumerate(group)}


class DeviceReport(TuneReport):
    """One device's telling within `--device all`: its progress and warnings as lines that
    start with the device's number (the runs print at once), the rest kept for the end."""

    def __init__(self, device: DeviceInfo, note: Callable[[str], None]) -> None:
        super().__init__(verbose=False)
        self.prefix = f"[device {device.index}] "
        self.forward = note

    def note(self, text: str) -> None:
        for line in text.splitlines():
            self.forward(self.prefix + line)


def tune_every_device(settings: TuneSettings, note: Callable[[str], None]
                      ) -> list[tuple[DeviceInfo, TuneResult | BaseException]]:
    """Every device of the machine (of `settings.backend`) tuned at once, each in a thread of
    its own whose measuring processes are its own (or, with a cluster, whose workers are those
    of its device), each into its own database and journals; identical devices, whose database
    and journals are one, share the run's steps between them instead (`identical_shares`), each
    taking about an even part of the plan's seconds. A device whose run fails does
    not stop the others: its error is returned in its place."""
    if settings.database is not None or settings.journal is not None:
        raise UsageError(f"{settings.wording.name('device')} all tunes each device into its "
                         f"own database and journals: leave out "
                         f"{settings.wording.name('database')} and "
                         f"{settings.wording.name('journal')}")
    devices = every_device(settings.backend)
    results: dict[int, TuneResult | BaseException] = {}
    shares = identical_shares(devices)
    with ExitStack() as stack:
        client = None
        if settings.cluster is not None:
            client = cluster_module(settings.wording).open_cluster(
                stack, settings.cluster, settings.workers, devices, note)

        def run(dev: DeviceInfo) -> None:
            one = replace(settings, device=dev, share=shares.get(dev.index))
            try:
                results[dev.index] = Tuning(one, DeviceReport(dev, note), client).run()
            except (Exception, KeyboardInterrupt) as exc:
                results[dev.index] = exc

        threads = [threading.Thread(target=run, args=(d,), name=f"tune-{d.index}", daemon=True)
                   for d in devices]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return [(d, results[d.index]) for d in devices]


# -- the Python entry point -------------------------------------------------------------------
def _call_text(given: Mapping[str, Any]) -> str:
    """The call as provenance, like the command line a command records."""
    return "clgemm.tune(" + ", ".join(f"{k}={v!r}" for k, v in given.items()) + ")"


def tune(device: DeviceInfo | str | int | None = None, rungs: Any = None, shapes: Any = None,
         seconds: float | None = None, *, backend: str | None = None,
         budget: int | None = None, exhaustive: bool = False, strategy: str = "auto",
         only: Mapping[str, Iterable[int]] | None = None, heuristics: bool = True,
         seed: int = 0, confirm: int = 3, repeats: int | None = None,
         warmup: int | None = None, jobs: int | None = None, fresh: bool = False,
         resume: bool = False, database: str | os.PathLike | None = None,
         launch_timeout: float = 30.0, build_timeout: float = 300.0,
         cluster: bool | str | None = None, workers: int | None = None,
         verbose: bool = True) -> TuneResult:
    """Tune a device as `clgemm tune` does and return what was stored.

    With neither `seconds`, `budget` nor `exhaustive` the run is the bounded plain tune (the
    plan `clgemm tune --dry-run` prints: at most 10 minutes on a GPU, 15 on a CPU), or with
    `rungs` and `shapes` the plan's time for each of them. `seconds` limits each rung's search
    (`--time`), `budget` its evaluations (`--budget`). Results go where the command puts them:
    the database `<results>/<device-key>.json` (or `database`) and journals under
    `<results>/journals`, `<results>` being $CLGEMM_RESULTS or the per-user data folder. gemm()
    in this process uses them at its next call. `verbose` prints the plan, the funnels and the
    summary (stdout) and the progress (stderr); without it nothing is printed.

    The journals are a cache: what an earlier run with the same device, size and rungs measured
    is reused, not measured again; `fresh` moves them aside (`<name>.old1`, ...) and starts
    new ones. `resume` is accepted for older programs and changes nothing.

    The measuring processes are started the way multiprocessing's "spawn" starts them, which
    runs the caller's script again in each of them; a script must therefore call tune() under
    `if __name__ == "__main__":`. Called while such a process starts, tune() ends that process
    at once (status SCRIPT_RERUN_EXIT), and the tune() that started it raises a `UsageError`
    saying so.

    `cluster` spreads the evaluations over the workers of a Dask cluster (the extra
    'clgemm[cluster]'): True starts one on this machine with a worker per device of the tuned
    model (`workers` sets how many), a text is a running scheduler's address. This process
    stays the one writer of the journals and the database (docs/tuning.md)."""
    if starting_child():
        raise SystemExit(SCRIPT_RERUN_EXIT)
    if isinstance(device, str) and device.strip().lower() == ALL:
        raise UsageError("device='all' is the command's (clgemm tune --device all); from "
                         "Python, tune each of clgemm.devices() in turn")
    given = {k: v for k, v in (("device", device), ("rungs", rungs), ("shapes", shapes),
                               ("seconds", seconds), ("backend", backend), ("budget", budget),
                               ("exhaustive", exhaustive or None))
             if v is not None}
    settings = TuneSettings.given(
        PYTHON, device=device, backend=backend, rungs=rungs, shapes=shapes, seconds=seconds,
        budget=budget, exhaustive=exhaustive, strategy=strategy, only=only,
        heuristics=heuristics, seed=seed, confirm=confirm, repeats=repeats, warmup=warmup,
        jobs=jobs, fresh=fresh, resume=resume, database=database,
        launch_timeout=launch_timeout, build_timeout=build_timeout, cluster=cluster,
        workers=workers, command=_call_text(given))
    return Tuning(settings, TuneReport(verbose)).run()


__all__ = ["ALL", "TuneReport", "TuneResult", "TuneRun", "Tuning", "device_line", "every_device",
           "identical_shares", "plan_steps", "stored_by_slot", "tune", "tune_every_device"]
