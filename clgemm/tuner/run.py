"""A tuning run from the rungs and shapes asked for to the configurations stored: the part that
`clgemm tune` and `clgemm.tune` share, so the command and a Python program tune the same way.

`plan_steps` turns the rungs, shapes and limits into steps (a plain request becomes the bounded
plan of `plan.py`), `TuneRun.prepare` builds every shape's spaces and checks every journal
before anything is measured, and `TuneRun.measure` measures them and returns a `TuneResult`:
per rung and shape the configuration the database now holds, and the files that hold it. The
command prints and the Python entry point returns; neither decides anything the other does not.
`tune` is the Python entry point: it checks its arguments the way the command's options are
checked, with the arguments' own names, before a device is opened.
"""

from __future__ import annotations

import io
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TextIO

from clgemm.backends import registry
from clgemm.configs.configuration import Config
from clgemm.configs.database import Database, load, results_dir
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.core.paths import check_writable
from clgemm.core.problem import Problem, parse_sizes
from clgemm.core.tables import FULL, Layout
from clgemm.devices.info import DeviceInfo
from clgemm.library import gemm as api
from clgemm.measure.ladder import default_repeats, default_size
from clgemm.rungs import GEMM_RUNGS, get_rung, parse_rungs
from clgemm.tuner.journal import PYTHON, Wording
from clgemm.tuner.plan import TuneStep, bounded_steps, default_plan, plan_table
from clgemm.tuner.session import (PreparedShape, check_known, prepare_shape, run_shape,
                                  summary_table, units)
from clgemm.tuner.strategies import make_strategy
from clgemm.tuner.tune import RungOutcome, TuneOptions
from clgemm.tuner.worker import SCRIPT_RERUN_EXIT, starting_child

Shape = tuple[int, int, int]
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
    shapes = [p.as_tuple() for p in problems or [default_shape]]
    if bounded:
        return bounded_steps(device, list(rungs or GEMM_RUNGS), shapes)
    return [TuneStep(n, shape, time_s or 0.0) for shape in shapes for n in (rungs or GEMM_RUNGS)]


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
    """Everything one run needs besides its database: the device, the steps, the search
    options and the measuring settings (None: the device type's repeats and warm-up, one
    pre-building process per core). `fresh` moves existing journals aside instead of reusing
    them; `wording` is how messages name the caller's choices (options or keywords)."""

    device: DeviceInfo
    steps: list[TuneStep]
    bounded: bool
    options: TuneOptions
    only: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    repeats: int | None = None
    warmup: int | None = None
    jobs: int | None = None
    fresh: bool = False
    journal_file: str | None = None
    launch_timeout: float = 30.0
    build_timeout: float = 300.0
    command: str = ""
    wording: Wording = PYTHON

    def __post_init__(self) -> None:
        self.repeats, self.warmup, self.jobs = self._settings()
        if self.journal_file and len(units(self.steps)) > 1:
            raise UsageError("--journal holds one shape: give one shape with it")

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
        return [prepare_shape(self.device, problem, steps, self.options, dict(self.only),
                              self.bounded, self.journal_file, results, repeats,
                              warmup, self.command, self.fresh, say=say, note=note,
                              layout=layout, wording=self.wording)
                for problem, steps in units(self.steps)]

    def measure(self, prepared: Sequence[PreparedShape], db: Database, note: Say,
                stream: TextIO | None = None) -> TuneResult:
        """Measure the prepared shapes one after the other, storing each rung's winner in `db`
        as soon as it is known; progress lines go to `stream` (default stderr)."""
        outcomes: list[tuple[Shape, RungOutcome]] = []
        repeats, warmup, jobs = self._settings()
        for shape in prepared:
            done = run_shape(self.device, shape, self.options, self.bounded, db, self.fresh,
                             self.command, repeats, warmup, jobs,
                             self.launch_timeout, self.build_timeout, note=note, stream=stream,
                             wording=self.wording)
            outcomes += [(shape.problem.as_tuple(), o) for o in done]
        journals = [path for shape in prepared for path, _ in shape.journals]
        return TuneResult(self.device, db.path, journals, outcomes,
                          stored_by_slot(db, [(o.rung, s) for s, o in outcomes]))


def stored_by_slot(db: Database, slots: Iterable[tuple[int, Shape]]
                   ) -> dict[tuple[int, Shape], Config]:
    """The database's configuration for each (rung, shape) slot that holds one."""
    out: dict[tuple[int, Shape], Config] = {}
    for number, shape in slots:
        entry = next((e for e in db.entries if e.rung == number and e.backend == db.backend
                      and tuple(e.shape) == tuple(shape)), None)
        if entry is not None:
            out[(number, shape)] = Config(number, dict(entry.params), "tuned")
    return out


# -- the Python entry point -------------------------------------------------------------------
def _rung_numbers(rungs: Any) -> list[int] | None:
    """None, a number, a spec such as '1-5' or 'tiled', or a sequence of those."""
    if rungs is None:
        return None
    items = [rungs] if isinstance(rungs, (int, str)) else rungs
    try:
        items = list(items)
    except TypeError:
        raise ArgumentTypeError(f"rungs={rungs!r}: give a rung number, a name such as "
                                f"'tiled', a spec such as '1-5', or a list of those") from None
    numbers: set[int] = set()
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ArgumentTypeError(f"rungs: {item!r} is neither a rung number nor a name")
        numbers.update(parse_rungs(item) if isinstance(item, str) else [get_rung(item).number])
    if not numbers:
        raise UsageError("rungs: the list is empty")
    return sorted(numbers)


def _problems(shapes: Any) -> list[Problem] | None:
    """None, a size S, an (M, N, K) triple, a text such as '1024,4096x4096x128', or a
    sequence of sizes and triples."""
    if shapes is None:
        return None
    if isinstance(shapes, str):
        return parse_sizes(shapes, "shapes")
    if isinstance(shapes, int) and not isinstance(shapes, bool):
        return [Problem(shapes, shapes, shapes)]
    try:
        items = list(shapes)
    except TypeError:
        raise ArgumentTypeError(f"shapes={shapes!r}: give a size, an (M, N, K) triple, or a "
                                f"list of those") from None
    if len(items) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        return [Problem(*items)]
    out: list[Problem] = []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            p = Problem(item, item, item)
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            p = Problem(*item)
        else:
            raise ArgumentTypeError(f"shapes: {item!r} is neither a size nor an (M, N, K) "
                                    f"triple")
        if p not in out:
            out.append(p)
    if not out:
        raise UsageError("shapes: the list is empty")
    return out


def _positive(name: str, value: float | None, allow_zero: bool = False) -> None:
    """The command's checks of a count or time, under the argument's name."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentTypeError(f"{name}={value!r}: must be a number")
    if not math.isfinite(value):
        raise UsageError(f"{name}={value!r}: must be a finite number")
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(f"{name}={value!r}: must be {'>= 0' if allow_zero else 'positive'}")


def _only(only: Mapping[str, Iterable[int]] | None,
          numbers: Iterable[int]) -> dict[str, tuple[int, ...]]:
    """{'VWM': (1, 4)}: candidates that replace a parameter's own; a name none of the rungs has
    is a mistake, as on the command line."""
    known = {name for n in numbers for name in get_rung(n).param_names()}
    out: dict[str, tuple[int, ...]] = {}
    for name, values in (only or {}).items():
        parsed = tuple(values) if not isinstance(values, int) else (values,)
        if not parsed or any(isinstance(v, bool) or not isinstance(v, int) or v < 0
                             for v in parsed):
            raise UsageError(f"only[{name!r}]: give non-negative integers")
        check_known(f"only[{name!r}]", name, known)
        out[name] = parsed
    return out


def _silent(text: str) -> None:
    """`say` and `note` of a run that prints nothing."""


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
    saying so."""
    if starting_child():
        raise SystemExit(SCRIPT_RERUN_EXIT)
    given = {k: v for k, v in (("device", device), ("rungs", rungs), ("shapes", shapes),
                               ("seconds", seconds), ("backend", backend), ("budget", budget),
                               ("exhaustive", exhaustive or None))
             if v is not None}
    _positive("seconds", seconds)
    _positive("budget", budget)
    _positive("confirm", confirm, allow_zero=True)
    _positive("repeats", repeats)
    _positive("warmup", warmup, allow_zero=True)
    _positive("jobs", jobs, allow_zero=True)
    _positive("launch_timeout", launch_timeout)
    _positive("build_timeout", build_timeout)
    if sum(x is not None for x in (budget, seconds)) + bool(exhaustive) > 1:
        raise UsageError("give one of seconds, budget and exhaustive, not several")
    if not isinstance(strategy, str):
        raise ArgumentTypeError(f"strategy={strategy!r}: give a strategy's name")
    if strategy.strip().lower() != "auto":
        make_strategy(strategy, f"strategy={strategy!r}")
    if fresh and resume:
        raise UsageError("fresh=True starts the journals over and resume=True continues them: "
                         "give one of them")
    numbers = _rung_numbers(rungs)
    problems = _problems(shapes)

    dev = registry.device_info(device, registry.split_backend(backend)[1])
    bounded = budget is None and seconds is None and not exhaustive
    steps = plan_steps(dev, numbers, problems, bounded, seconds)
    options = TuneOptions(strategy="exhaustive" if exhaustive else strategy, budget=budget,
                          time_s=seconds, seed=seed, heuristics=heuristics, confirm=confirm)
    run = TuneRun(dev, steps, bounded, options,
                  _only(only, sorted({s.rung for s in steps})), repeats, warmup, jobs, fresh,
                  None, launch_timeout, build_timeout, _call_text(given), PYTHON)

    quiet = io.StringIO()  # where the progress lines go when nothing is to be printed
    say: Say = print if verbose else _silent
    note: Say = (lambda text: print(text, file=sys.stderr)) if verbose else _silent
    say(f"tuning on device {dev.index}: {dev.name} ({dev.platform}, driver "
        f"{dev.driver_version})")
    if bounded:
        say(plan_table(dev, steps))
    results = results_dir()
    prepared = run.prepare(results, say=say, note=note)
    db = load(dev, Path(database) if database else None)
    check_writable("database", db.path)
    out = run.measure(prepared, db, note=note, stream=None if verbose else quiet)
    api.clear_caches()  # the choices gemm() remembered predate what was just stored
    if verbose and out.outcomes:
        say("")
        say(out.table())
        say(f"\ndatabase: {out.database}")
    return out


__all__ = ["TuneResult", "TuneRun", "plan_steps", "stored_by_slot", "tune"]
