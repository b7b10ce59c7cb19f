"""Tuning one shape of a run: the run's steps grouped by shape, each shape's spaces, funnels
and journals prepared (and everything that can be refused refused) before any shape is
measured, then each shape's rungs measured in one worker process, one after the other.

Preparing all shapes first means a mistake (a journal of another device, a space too big for
memory) costs a second, not the first hour of a run. What is printed goes through the `say`
(the report) and `note` (progress and warnings) callables the caller passes, so the run does
not care where its words end up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, ContextManager, Mapping, Sequence, TextIO

from clgemm.configs.database import Database
from clgemm.configs.splits import read_b_pays_for_tune
from clgemm.core.paths import check_writable
from clgemm.core.problem import Problem
from clgemm.core.tables import (BRIEF_NOTE, FULL, Column, Layout, fit_lines, params_brief, render,
                                status_cell)
from clgemm.devices.info import DeviceInfo
from clgemm.measure.rung_runner import check_workspace
from clgemm.rungs import Rung, get_rung
from clgemm.tuner.evaluate import Evaluator, Measurer
from clgemm.tuner.journal import (PYTHON, Journal, Wording, check_journal, default_journal_path,
                                  refuse_in_use)
from clgemm.tuner.plan import TuneStep, model_seeds, seeds
from clgemm.tuner.rung_tune import (RungOutcome, TuneOptions, journal_header, resolve_strategy,
                                    tune_rung)
from clgemm.tuner.funnels import Funnels, FunnelTask, build
from clgemm.tuner.space import SearchSpace, funnel_table, with_stored

Say = Callable[[str], None]


def units(steps: Sequence[TuneStep]) -> list[tuple[Problem, list[TuneStep]]]:
    """The steps grouped by shape, in order: one measuring process per shape."""
    order: list[tuple[int, ...]] = []
    for s in steps:
        if s.shape not in order:
            order.append(s.shape)
    return [(Problem.of(shape), [s for s in steps if s.shape == shape]) for shape in order]


@dataclass
class PreparedShape:
    """One shape ready to measure: its steps, each rung's pruned space, and the journals (each
    with the rungs it records and its header)."""

    problem: Problem
    steps: list[TuneStep]
    spaces: dict[int, SearchSpace]
    journals: list[tuple[Path, list[Rung]]]
    headers: dict[Path, dict[str, Any]]

    @property
    def configurations(self) -> int:
        return sum(len(space) for space in self.spaces.values())


def prepare_shape(dev: DeviceInfo, problem: Problem, steps: list[TuneStep], options: TuneOptions,
                  only: dict[str, tuple[int, ...]], bounded: bool, journal_file: Path | None,
                  results: Path, repeats: int, warmup: int, command: str, fresh: bool,
                  say: Say, note: Say, layout: Layout = FULL,
                  wording: Wording = PYTHON, funnels: Funnels | None = None) -> PreparedShape:
    """Spaces, funnels, memory and journal checks of one shape, before anything is measured;
    the funnels go to `say` (laid out by `layout`), what becomes of each journal and its
    warnings to `note`, and messages name the caller's choices as `wording` says. The spaces
    come from `funnels` where given (the run's, which may have built them already), else are
    built here."""
    rungs = [get_rung(s.rung) for s in steps]
    spaces, resolved = {}, {}
    for step, rung in zip(steps, rungs):
        step_options = replace(options, time_s=step.seconds) if bounded else options
        task = funnel_task(dev, rung, problem, options, only)
        space = funnels.space(task) if funnels is not None else build(task)
        spaces[rung.number] = space
        how = resolved[rung.number] = resolve_strategy(options.strategy, step_options,
                                                       len(space))
        say("")
        say(funnel_table(space, f"rung {rung.number} ({rung.title}) at "
                                f"{problem.label}: pruning funnel, "
                                f"then {how}", layout))
    # The measuring worker's workspace holds every helper's scratch any candidate needs.
    check_workspace(dev, problem, [(r, p) for r in rungs
                                   for p in helper_configs(r, spaces[r.number])],
                    vendor_c=False)
    if journal_file:
        journals = [(journal_file, rungs)]
    else:
        journals = [(default_journal_path(results, dev.key, r.number, problem.dims()), [r])
                    for r in rungs]
    headers = {}
    for path, group in journals:
        check_writable(wording.name("journal") if journal_file else "journal", path)
        headers[path] = journal_header(dev, problem, group, options, repeats, warmup, command,
                                       {r.number: resolved[r.number] for r in group})
        _check_journal(path, headers[path], fresh, wording, note)
    return PreparedShape(problem, steps, spaces, journals, headers)


def helper_configs(rung: Rung, space: SearchSpace) -> list[dict[str, int]]:
    """The rung's defaults and a configuration of its space for each set of helpers the space
    holds: a workspace that serves them serves every candidate, and a space of a hundred
    thousand configurations is not turned into dictionaries one by one to find that out."""
    if rung.extra_helpers is None:
        return [rung.defaults()]
    configs = (space.firsts_by(rung.helper_params) if rung.helper_params
               and set(rung.helper_params) <= set(space.names) else space.configs)
    return [rung.defaults(), *map(space.params, configs)]


def funnel_task(dev: DeviceInfo, rung: Rung, problem: Problem, options: TuneOptions,
                only: Mapping[str, Sequence[int]]) -> FunnelTask:
    """What `rung`'s space at `problem` is built from: the device's limits, what gemm() runs
    there now kept (`seeds`), and whether reading B as it lies pays there however little a
    launch costs (`read_b_pays_for_tune`)."""
    return FunnelTask.of(rung.number, problem, dev.limits(), options.heuristics, only,
                         seeds(dev, rung, problem.as_tuple(), batch=problem.batch),
                         read_b_pays_for_tune(dev, problem.as_tuple()))


#: what measures one shape: given the shape, a context that yields its evaluator (None: an
#: `Evaluator` of this machine, as `run_shape` opens one)
OpenEvaluator = Callable[[Problem], ContextManager[Measurer]]


def run_shape(dev: DeviceInfo, shape: PreparedShape, options: TuneOptions, bounded: bool,
              db: Database, fresh: bool, command: str, repeats: int, warmup: int, jobs: int,
              launch_timeout: float, build_timeout: float, note: Say,
              stream: TextIO | None = None, wording: Wording = PYTHON,
              open_evaluator: OpenEvaluator | None = None) -> list[RungOutcome]:
    """Measure one shape's rungs in one measuring process (or, with `open_evaluator`, on the
    evaluator it opens, a cluster's); store each rung's winner in `db` as soon as it is known,
    so an interrupted run keeps what it finished. Progress lines go to `stream` (default
    stderr)."""
    problem = shape.problem
    seconds = {s.rung: s.seconds for s in shape.steps}
    outcomes = []
    opened = open_evaluator(problem) if open_evaluator is not None else Evaluator(
        dev, problem, repeats=repeats, warmup=warmup, jobs=jobs,
        launch_timeout=launch_timeout, build_timeout=build_timeout, seed=0)
    with opened as evaluator:
        for path, group in shape.journals:
            with Journal.open(path, shape.headers[path], fresh, command=command,
                              wording=wording) as journal:
                if journal.moved_to is not None:
                    note(f"journal {path}: the one there was moved aside to "
                         f"{journal.moved_to}; a new one is started")
                for rung in group:
                    space = shape.spaces[rung.number]
                    if not len(space):
                        note(f"rung {rung.number}: nothing left to measure after the "
                             f"funnel; skipped")
                        continue
                    note(f"rung {rung.number} at {problem.label}: "
                         f"journal {journal.path}")
                    start = seeds(dev, rung, problem.as_tuple(), batch=problem.batch)
                    space, added = with_stored(space, rung, dev.limits(), problem, start)
                    if added:
                        note(f"rung {rung.number} at {problem.label}: {added} configuration(s) "
                             f"stored since the funnel was built kept in its space")
                    if bounded:
                        start += model_seeds(dev, rung, space, problem.as_tuple(),
                                             seed=options.seed, batch=problem.batch)
                    opts = replace(options, seeds=tuple(start),
                                   time_s=seconds[rung.number] if bounded else options.time_s)
                    out = tune_rung(rung, space, journal, evaluator, opts, device=dev,
                                    problem=problem, command=command, db=db, stream=stream)
                    outcomes.append(out)
                    if out.entry is not None:
                        db.save()
                    note(summary_line(out))
    return outcomes


def _check_journal(path: Path, header: dict, fresh: bool, wording: Wording,
                   note: Say) -> None:
    """Refuse now what Journal.open would refuse later (a journal another run has open, one
    made for another device, driver, size or rungs), say how many measurements an existing
    one lends this run, and warn about kernels edited since they were made."""
    refuse_in_use(path, wording)
    existing = check_journal(path, header, fresh=fresh, wording=wording)
    if existing is None:
        return
    old, records = existing[0], existing[1]
    reused = sum(1 for r in records if "config" in r and r.get("kind", "search") == "search")
    held = f"its {reused} measurement(s) are reused" if reused else "it holds no measurement yet"
    note(f"journal {path}: {held} and new ones appended ({wording.fresh} moves it aside and "
         f"starts a new one)")
    for number, digest in (old.get("kernels") or {}).items():
        if header["kernels"].get(number) not in (None, digest):
            note(f"warning: rung {number}'s kernel changed since {path} was started; "
                 f"its earlier results are reused as they are")


def summary_line(out: RungOutcome) -> str:
    """One rung's outcome in a line, printed as each rung finishes."""
    best = out.entry
    text = (f"rung {out.rung}: {out.measured} measured ({out.measured_now} now, "
            f"{out.failures} failed), stopped: {out.stop or 'done'}")
    if best is not None:
        lo, hi = best.spread_ms or (best.ms, best.ms)
        params = " ".join(f"{k}={v}" for k, v in best.params.items())
        text += (f"; best {best.gflops:.2f} GFLOP/s {params}"
                 f" (median of {best.repeats}: {best.ms:.3f} ms, spread {lo:.3f}-{hi:.3f} ms)")
    if out.why:
        text += f"; {out.why}"
    return text


def summary_table(outcomes: Sequence[RungOutcome], layout: Layout = FULL,
                  shapes: Sequence[tuple[int, ...]] | None = None) -> str:
    """Every rung's outcome of the run, against its defaults, printed at the end; with
    `shapes` (one per outcome), a column saying which shape each was tuned at. Fitted, the
    rung's short name and only the parameters that differ from its defaults."""
    rows = []
    for i, o in enumerate(outcomes):
        e = o.entry
        d = o.default
        rung = get_rung(o.rung)
        up = f"{e.gflops / d['gflops']:.2f}" if e is not None and d and d.get("gflops") else ""
        fails = ", ".join(f"{k} {v}" for k, v in sorted(o.statuses.items()) if k != "ok")
        params = "-"
        if e is not None:
            params = (rung.params_text(e.params) if layout.wide
                      else params_brief(e.params, rung.defaults()))
        rows.append([o.rung, o.title if layout.wide else rung.slug,
                     *(["x".join(map(str, shapes[i]))] if shapes else []), o.space_size,
                     o.strategy, o.measured, status_cell(fails) if fails else "0", params,
                     f"{e.gflops:.2f}" if e else "", f"{d['gflops']:.2f}" if d else "",
                     up, "yes" if o.stored else "no"])
    columns: list[Column | str] = [
        "rung", "name", *(["shape"] if shapes else []), Column("space", drop=2),
        Column("strategy", drop=1), "measured", Column("failed", wrap=12),
        Column("best parameters", short="parameters", wrap=20), "GFLOP/s",
        Column("default GFLOP/s", short="default"), "x default", "stored"]
    table = render(columns, rows, layout)
    # what the "stored" column cannot say: why a result was kept out, or what it replaced
    why = [f"rung {o.rung}{' at ' + 'x'.join(map(str, shapes[i])) if shapes else ''}: {o.why}"
           for i, o in enumerate(outcomes) if o.why and (not o.stored or "unusable" in o.why)]
    return "\n".join([table] + fit_lines(why + ([] if layout.wide else [BRIEF_NOTE]), layout))


def outcome_rows(outcomes: Sequence[tuple[tuple[int, ...], RungOutcome]]) -> list[dict]:
    """One row per (shape, rung outcome) of a run, for `clgemm tune --json` and --csv: the
    search, its failures by status, the best configuration and its defaults' speed."""
    out = []
    for shape, o in outcomes:
        e, d = o.entry, o.default or {}
        out.append({"rung": o.rung, "name": o.title, "shape": list(shape),
                    "space": o.space_size, "strategy": o.strategy, "measured": o.measured,
                    "measured_now": o.measured_now,
                    "failed": {k: v for k, v in sorted(o.statuses.items()) if k != "ok"},
                    "stopped": o.stop or "done", "params": dict(e.params) if e else None,
                    "ms": e.ms if e else None, "gflops": e.gflops if e else None,
                    "default_gflops": d.get("gflops"),
                    "speedup_over_default": (e.gflops / d["gflops"] if e and d.get("gflops")
                                             else None),
                    "stored": o.stored})
    return out

