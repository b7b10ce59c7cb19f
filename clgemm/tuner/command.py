"""`clgemm tune`: the command line of the tuner. Parses, checks, prints; the work is elsewhere.

Everything that can be refused is refused before the first kernel is built (unknown strategy,
bad budget, a journal that exists without --resume or belongs to another device, a foreign
database), so a mistake costs a second, not the first hour of a tuning run.
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

import click

from ..database import load, results_dir
from ..devices import select_device
from ..errors import UsageError
from ..ladder import default_repeats, default_size
from ..paths import check_writable
from ..rungs import REGISTRY, get_rung, parse_rungs
from ..runner import Problem, check_workspace, parse_sizes
from .evaluate import Evaluator
from .journal import Journal, default_journal_path
from .plan import (GO_FURTHER, Step, bound_seeds, bounded_steps, default_plan, plan_table,
                   seeds)
from .space import build_space, funnel_table
from .strategies import make_strategy
from .tune import TuneOptions, journal_header, resolve_strategy, tune_rung

HELP_DEVICE = "device index (see 'clgemm devices') or a case-insensitive part of its name"


def _positive(name: str, value: float | None, allow_zero: bool = False) -> None:
    """NaN compares false with everything, so it is refused by name rather than let through
    as "not negative"; an infinite limit is no limit, which these options cannot mean."""
    if value is None:
        return
    if not math.isfinite(value):
        raise UsageError(f"{name} {value:g}: must be a finite number")
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(f"{name} {value:g}: must be {'>= 0' if allow_zero else 'positive'}")


@click.command()
@click.option("--device", "-d", default=None, help=HELP_DEVICE)
@click.option("--backend", "-b", type=click.Choice(["opencl", "cuda"]), default=None,
              help="only this backend's devices (an NVIDIA GPU is listed by both)")
@click.option("--rungs", "-r", default=None,
              help="e.g. 1-5, 1,3,6-10 or 9,10,direct (default: the plan's, see below)")
@click.option("--size", "-s", type=int, default=None, help="square size M=N=K")
@click.option("--mnk", type=int, nargs=3, default=None, help="three sizes M N K")
@click.option("--shapes", default=None,
              help="several shapes in one run: comma list of S or MxNxK, e.g. 1024,4096x4096x128")
@click.option("--exhaustive", is_flag=True,
              help="measure every configuration the funnel keeps (the estimated time is printed "
                   "first)")
@click.option("--strategy", default="auto", show_default=True,
              help="exhaustive, random, annealing, genetic; auto: exhaustive when the budget "
                   "covers the space, else annealing")
@click.option("--budget", type=int, default=None, help="at most this many evaluations per rung")
@click.option("--time", "time_s", type=float, default=None,
              help="at most this many seconds per rung (without --budget, --time or "
                   "--exhaustive: a plan of at most 10 minutes on a GPU, 15 on a CPU)")
@click.option("--resume", is_flag=True, help="continue the journal, skipping what it holds")
@click.option("--no-heuristics", is_flag=True, help="measure everything the device can run")
@click.option("--journal", "journal_file", type=click.Path(dir_okay=False), default=None,
              help="one journal for all rungs of one shape (default: <results>/journals/"
                   "<device>/rung<N>-<M>x<N>x<K>.jsonl per rung and shape)")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the strategies")
@click.option("--jobs", "-j", type=int, default=None,
              help="pre-building processes (default: one per core; 0: build only when measuring)")
@click.option("--repeats", type=int, default=None, help="timed launches per evaluation")
@click.option("--warmup", type=int, default=None, help="untimed launches before timing")
@click.option("--confirm", type=int, default=3, show_default=True,
              help="re-measure this many of the best with more repeats before storing one")
@click.option("--launch-timeout", type=float, default=30.0, show_default=True,
              help="seconds one launch may take (JIT at first launch included) before the "
                   "configuration is recorded as timeout")
@click.option("--build-timeout", type=float, default=300.0, show_default=True,
              help="seconds one build may take")
@click.option("--database", "database_file", type=click.Path(dir_okay=False), default=None,
              help="tuning database file (default: <results>/<device-key>.json, <results> being "
                   "$CLGEMM_RESULTS or the per-user data folder)")
@click.option("--only", "only_specs", multiple=True, metavar="NAME=V1,V2,...",
              help="search only these values of a parameter (repeatable), e.g. --only VWM=1,4")
@click.option("--dry-run", is_flag=True, help="print the pruning funnels and stop")
@click.option("--compare-strategies", "replay_file", type=click.Path(dir_okay=False),
              default=None, metavar="JOURNAL",
              help="replay every strategy against an exhaustive journal and print the table")
def tune(device, backend, rungs, size, mnk, shapes, exhaustive, strategy, budget, time_s,
         resume, no_heuristics, journal_file, seed, jobs, repeats, warmup, confirm,
         launch_timeout, build_timeout, database_file, only_specs, dry_run, replay_file) -> None:
    """Search each rung's parameters on one device; store the best verified configuration.

    Without --budget, --time or --exhaustive the run is bounded: the whole ladder and the shapes
    gemm() runs, at most 10 minutes on a GPU and 15 on a CPU, each search starting from the best
    configurations known for the device, its family and its type. Results go to the per-user
    data folder ($CLGEMM_RESULTS or --database choose another place)."""
    from ..cli import _command_line, _problem

    if replay_file:
        from .replay import compare

        if not Path(replay_file).is_file():
            raise UsageError(f"--compare-strategies: no such file {replay_file}")
        click.echo(compare(Path(replay_file)))
        return

    if sum(x is not None for x in (budget, time_s)) + bool(exhaustive) > 1:
        raise UsageError("give one of --budget, --time and --exhaustive, not several")
    _positive("--budget", budget)
    _positive("--time", time_s)
    _positive("--jobs", jobs, allow_zero=True)
    _positive("--repeats", repeats)
    _positive("--warmup", warmup, allow_zero=True)
    _positive("--confirm", confirm, allow_zero=True)
    _positive("--launch-timeout", launch_timeout)
    _positive("--build-timeout", build_timeout)
    if strategy.strip().lower() != "auto":
        make_strategy(strategy)  # an unknown name is refused now, not after the first rung
    if shapes is not None and (size is not None or mnk):
        raise UsageError("give either --shapes or --size/--mnk, not both")

    dev = select_device(device, backend=backend)
    numbers = parse_rungs(rungs) if rungs is not None else None
    if shapes is not None:
        problems = parse_sizes(shapes, "--shapes")
    elif size is not None or mnk:
        problems = [_problem(size, mnk, default_size(dev))]
    else:
        problems = None
    bounded = budget is None and time_s is None and not exhaustive
    if bounded and numbers is None and problems is None:
        steps = default_plan(dev)
    elif bounded:
        steps = bounded_steps(dev, numbers or sorted(REGISTRY),
                              [p.as_tuple() for p in problems or [_problem(None, None,
                                                                           default_size(dev))]])
    else:
        shapes_ = [p.as_tuple() for p in problems or [_problem(None, None, default_size(dev))]]
        steps = [Step(n, shape, time_s or 0.0) for shape in shapes_
                 for n in (numbers or sorted(REGISTRY))]
    units = _units(steps)
    if journal_file and len(units) > 1:
        raise UsageError("--journal holds one shape: give one shape with it")
    rung_objs_all = sorted({s.rung for s in steps})
    only = parse_only(only_specs, [get_rung(n) for n in rung_objs_all])
    dw, dr = default_repeats(dev)
    warmup = dw if warmup is None else warmup
    repeats = dr if repeats is None else repeats
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    options = TuneOptions(strategy="exhaustive" if exhaustive else strategy, budget=budget,
                          time_s=time_s, seed=seed, heuristics=not no_heuristics,
                          confirm=confirm)
    command = _command_line()
    results = results_dir()

    click.echo(f"tuning on device {dev.index}: {dev.name} ({dev.platform}, driver "
               f"{dev.driver_version})")
    if bounded:
        click.echo("plan (no --budget, --time or --exhaustive given):")
        click.echo(plan_table(dev, steps))
    prepared = []
    for problem, unit in units:
        prepared.append(_prepare_unit(dev, problem, unit, options, only, bounded, journal_file,
                                      results, repeats, warmup, command, resume))
    if exhaustive:
        total = sum(len(space) for _, _, spaces, _, _ in prepared for space in spaces.values())
        per = 1.0 if dev.is_cpu else 0.3
        click.echo(f"\n--exhaustive: {total} configurations, about {total * per / 60:.0f} "
                   f"minutes at ~{per:g} s each")
    if dry_run:
        return
    db = load(dev, Path(database_file) if database_file else None)
    check_writable("--database" if database_file else "tuning database", db.path)

    outcomes = []
    for problem, unit, spaces, plans, headers in prepared:
        outcomes += _run_unit(dev, problem, unit, spaces, plans, headers, options, bounded,
                              db, resume, command, repeats, warmup, jobs, launch_timeout,
                              build_timeout)
    if outcomes:
        click.echo("")
        click.echo(_summary_table(outcomes))
        click.echo(f"\ndatabase: {db.path}")
        if bounded:
            click.echo(GO_FURTHER)


def _units(steps: list[Step]) -> list[tuple[Problem, list[Step]]]:
    """The steps grouped by shape, in order: one measuring process per shape."""
    order: list[tuple[int, int, int]] = []
    for s in steps:
        if s.shape not in order:
            order.append(s.shape)
    return [(Problem(*shape), [s for s in steps if s.shape == shape]) for shape in order]


def _prepare_unit(dev, problem, unit, options, only, bounded, journal_file, results, repeats,
                  warmup, command, resume):
    """Spaces, funnels, memory and journal checks of one shape, before anything is measured."""
    rung_objs = [get_rung(s.rung) for s in unit]
    spaces, resolved = {}, {}
    for step, rung in zip(unit, rung_objs):
        step_options = replace(options, time_s=step.seconds) if bounded else options
        space = build_space(rung, dev.limits(), problem, heuristics=options.heuristics,
                            only=only)
        spaces[rung.number] = space
        how = resolved[rung.number] = resolve_strategy(options.strategy, step_options,
                                                       len(space))
        click.echo("")
        click.echo(funnel_table(space, f"rung {rung.number} ({rung.title}) at "
                                       f"{problem.m}x{problem.n}x{problem.k}: pruning funnel, "
                                       f"then {how}"))
    # The measuring worker's workspace holds every helper's scratch any candidate needs.
    check_workspace(dev, problem, [(r, p) for r in rung_objs for p in
                                   [r.defaults(), *map(spaces[r.number].params,
                                                       spaces[r.number].configs)]],
                    vendor_c=False)
    if journal_file:
        plans = [(Path(journal_file), rung_objs)]
    else:
        plans = [(default_journal_path(results, dev.key, r.number, problem.as_list()), [r])
                 for r in rung_objs]
    headers = {}
    for path, group in plans:
        check_writable("--journal" if journal_file else "journal", path)
        headers[path] = journal_header(dev, problem, group, options, repeats, warmup, command,
                                       {r.number: resolved[r.number] for r in group})
        _check_journal(path, headers[path], resume)
    return problem, unit, spaces, plans, headers


def _run_unit(dev, problem, unit, spaces, plans, headers, options, bounded, db, resume, command,
              repeats, warmup, jobs, launch_timeout, build_timeout) -> list:
    """Measure one shape's rungs in one measuring process; store each rung's winner."""
    seconds = {s.rung: s.seconds for s in unit}
    outcomes = []
    with Evaluator(dev, problem, repeats=repeats, warmup=warmup, jobs=jobs,
                   launch_timeout=launch_timeout, build_timeout=build_timeout,
                   seed=0) as evaluator:
        for path, group in plans:
            with Journal.open(path, headers[path], resume, command=command) as journal:
                for rung in group:
                    space = spaces[rung.number]
                    if not len(space):
                        click.echo(f"rung {rung.number}: nothing left to measure after the "
                                   f"funnel; skipped", err=True)
                        continue
                    click.echo(f"rung {rung.number} at {problem.m}x{problem.n}x{problem.k}: "
                               f"journal {journal.path}", err=True)
                    start = seeds(dev, rung, problem.as_tuple())
                    if bounded:
                        start += bound_seeds(dev, rung, space, problem.as_tuple(),
                                             seed=options.seed)
                    opts = replace(options, seeds=tuple(start),
                                   time_s=seconds[rung.number] if bounded else options.time_s)
                    out = tune_rung(rung, space, journal, evaluator, opts, device=dev,
                                    problem=problem, command=command, db=db)
                    outcomes.append(out)
                    if out.entry is not None:
                        db.save()
                    click.echo(_summary_line(out), err=True)
    return outcomes


def parse_only(specs, rungs) -> dict[str, tuple[int, ...]]:
    """'--only VWM=1,4' -> {'VWM': (1, 4)}; a name none of the rungs has is a mistake."""
    known = {name for r in rungs for name in r.param_names()}
    only: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip()
        try:
            parsed = tuple(int(v) for v in values.split(",")) if sep else ()
        except ValueError:
            parsed = ()
        if not name or not parsed or any(v < 0 for v in parsed):
            raise UsageError(f"--only {spec}: write NAME=V1,V2,... with non-negative integers")
        if name not in known:
            raise UsageError(f"--only {spec}: none of the chosen rungs has a parameter {name} "
                             f"(they have {', '.join(sorted(known)) or 'none'})")
        only[name] = parsed
    return only


def _check_journal(path: Path, header: dict, resume: bool) -> None:
    """Refuse now what Journal.open would refuse later, and warn about edited kernels."""
    from .journal import check_journal

    existing = check_journal(path, header, resume)
    if existing is None:
        if resume:
            click.echo(f"note: {path} does not exist yet; starting it", err=True)
        return
    old = existing[0]
    for number, digest in (old.get("kernels") or {}).items():
        if header["kernels"].get(number) not in (None, digest):
            click.echo(f"warning: rung {number}'s kernel changed since {path} was started; "
                       f"its earlier results are reused as they are", err=True)


def _summary_line(out) -> str:
    best = out.entry
    text = (f"rung {out.rung}: {out.measured} measured ({out.measured_now} now, "
            f"{out.failures} failed), stopped: {out.stop or 'done'}")
    if best is not None:
        lo, hi = best.spread_ms or (best.ms, best.ms)
        params = " ".join(f"{k}={v}" for k, v in best.params.items())
        text += (f"; best {best.gflops:.2f} GFLOP/s {params}"
                 f" (median of {best.repeats}: {best.ms:.3f} ms, spread {lo:.3f}-{hi:.3f} ms)")
    return text


def _summary_table(outcomes) -> str:
    from tabulate import tabulate

    rows = []
    for o in outcomes:
        e = o.entry
        d = o.default
        up = f"{e.gflops / d['gflops']:.2f}" if e is not None and d and d.get("gflops") else ""
        fails = ", ".join(f"{k} {v}" for k, v in sorted(o.statuses.items()) if k != "ok")
        rows.append([o.rung, o.title, o.space_size, o.strategy, o.measured, fails or "0",
                     " ".join(f"{k}={v}" for k, v in e.params.items()) if e else "-",
                     f"{e.gflops:.2f}" if e else "", f"{d['gflops']:.2f}" if d else "",
                     up, "yes" if o.stored else "no"])
    return tabulate(rows, headers=["rung", "name", "space", "strategy", "measured", "failed",
                                   "best parameters", "GFLOP/s", "default GFLOP/s", "x default",
                                   "stored"], disable_numparse=True)

