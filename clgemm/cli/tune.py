"""`clgemm tune`: the tuner's command. Parses, checks, prints; the run is `clgemm.tuner.run`.

Everything that can be refused is refused before the first kernel is built (unknown strategy,
bad budget, a journal of another device or one another run has open, a foreign database), so a
mistake costs a second, not the first hour of a tuning run. A journal of the same device, size
and rungs is reused as a cache; --fresh moves it aside and starts a new one.
"""

from __future__ import annotations

from pathlib import Path

import click

from clgemm.backends import select_device
from clgemm.cli.options import (command_line, device_options, output_options, positive,
                                problem_from_options, size_options, timing_options)
from clgemm.cli.output import Output
from clgemm.configs.database import load, results_dir
from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file
from clgemm.core.paths import check_writable
from clgemm.core.problem import parse_sizes
from clgemm.core.tables import csv_text, fit_lines, params_text
from clgemm.measure.ladder import default_size
from clgemm.rungs import get_rung, parse_rungs
from clgemm.tuner.journal import COMMAND
from clgemm.tuner.plan import GO_FURTHER, plan_table
from clgemm.tuner.replay import compare
from clgemm.tuner.run import TuneRun, plan_steps
from clgemm.tuner.session import outcome_rows, parse_only, summary_table
from clgemm.tuner.strategies import STRATEGIES, make_strategy
from clgemm.tuner.tune import AUTO_PARTIAL, TuneOptions

#: rough seconds per configuration, for the estimate --exhaustive prints first
SECONDS_PER_CONFIG = {"CPU": 1.0, "GPU": 0.3}
#: the "format" of what `clgemm tune --json` writes
FORMAT = "clgemm-tune"


def strategy_help() -> str:
    """The --strategy help, written from the registry so that a strategy added there is
    offered and described here without an edit."""
    each = "; ".join(f"{name}: {cls.summary}" for name, cls in STRATEGIES.items())
    return (f"{each}; auto: exhaustive where --budget covers a rung's space, else "
            f"{AUTO_PARTIAL} (with --time and in the bounded plan too)")


@click.command()
@device_options
@click.option("--rungs", "-r", default=None,
              help="e.g. 1-5, 1,3,6-10 or tiled,tiled-any,direct (default: the plan's, see "
                   "below)")
@size_options
@click.option("--shapes", default=None,
              help="several shapes in one run: comma list of S or MxNxK, e.g. 1024,4096x4096x128")
@click.option("--exhaustive", is_flag=True,
              help="measure every configuration the funnel keeps (the estimated time is printed "
                   "first)")
@click.option("--strategy", default="auto", show_default=True,
              metavar="|".join(["auto", *STRATEGIES]), help=strategy_help())
@click.option("--budget", type=int, default=None, callback=positive(),
              help="at most this many evaluations per rung")
@click.option("--time", "time_s", type=float, default=None, callback=positive(),
              help="at most this many seconds per rung (without --budget, --time or "
                   "--exhaustive: a plan of at most 10 minutes on a GPU, 15 on a CPU)")
@click.option("--fresh", is_flag=True,
              help="move existing journals aside (<journal>.old1, ...) and measure everything "
                   "again (default: reuse what they hold)")
@click.option("--resume", is_flag=True,
              help="reuse what the journals hold (what a run always does; kept for scripts)")
@click.option("--no-heuristics", is_flag=True, help="measure everything the device can run")
@click.option("--journal", "journal_file", type=click.Path(dir_okay=False), default=None,
              help="one journal for all rungs of one shape (default: <results>/journals/"
                   "<device>/rung<N>-<M>x<N>x<K>.jsonl per rung and shape)")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the strategies")
@click.option("--jobs", "-j", type=int, default=None, callback=positive(allow_zero=True),
              help="pre-building processes (default: one per core; 0: build only when measuring)")
@timing_options(repeats_help="timed launches per evaluation",
                warmup_help="untimed launches before timing")
@click.option("--confirm", type=int, default=3, show_default=True,
              callback=positive(allow_zero=True),
              help="re-measure this many of the best with more repeats before storing one")
@click.option("--launch-timeout", type=float, default=30.0, show_default=True,
              callback=positive(),
              help="seconds one launch may take (JIT at first launch included) before the "
                   "configuration is recorded as timeout")
@click.option("--build-timeout", type=float, default=300.0, show_default=True,
              callback=positive(), help="seconds one build may take")
@click.option("--database", "database_file", type=click.Path(dir_okay=False), default=None,
              help="tuning database file (default: <results>/<device-key>.json, <results> being "
                   "$CLGEMM_RESULTS or the per-user data folder)")
@click.option("--only", "only_specs", multiple=True, metavar="NAME=V1,V2,...",
              help="search only these values of a parameter (repeatable), e.g. --only VWM=1,4")
@click.option("--dry-run", is_flag=True, help="print the pruning funnels and stop")
@click.option("--compare-strategies", "replay_file", type=click.Path(dir_okay=False),
              default=None, metavar="JOURNAL",
              help="replay every strategy against an exhaustive journal and print the table")
@output_options(csv=True)
def tune(device: str | None, backend: str | None, rungs: str | None, size: int | None,
         mnk: tuple[int, int, int] | None, shapes: str | None, exhaustive: bool,
         strategy: str, budget: int | None, time_s: float | None, fresh: bool, resume: bool,
         no_heuristics: bool, journal_file: str | None, seed: int, jobs: int | None,
         repeats: int | None, warmup: int | None, confirm: int, launch_timeout: float,
         build_timeout: float, database_file: str | None, only_specs: tuple[str, ...],
         dry_run: bool, replay_file: str | None, out: Output) -> None:
    """Search each rung's parameters on one device; store the best verified configuration.

    Without --budget, --time or --exhaustive the run is bounded: the whole ladder and the shapes
    gemm() runs, at most 10 minutes on a GPU and 15 on a CPU, each search starting from the best
    configurations known for the device, its family and its type. Results go to the per-user
    data folder ($CLGEMM_RESULTS or --database choose another place)."""
    if replay_file:
        if not Path(replay_file).exists():
            raise UsageError(f"--compare-strategies: no such file {replay_file}")
        if not is_regular_file(replay_file):
            raise UsageError(f"--compare-strategies {replay_file}: not a regular file")
        if out.json_file or out.csv_file:
            raise UsageError("--compare-strategies prints a table only: leave out --json and "
                             "--csv")
        out.table("\n".join(fit_lines(compare(Path(replay_file)).splitlines(), out.layout)))
        return

    if sum(x is not None for x in (budget, time_s)) + bool(exhaustive) > 1:
        raise UsageError("give one of --budget, --time and --exhaustive, not several")
    if strategy.strip().lower() != "auto":
        make_strategy(strategy)  # an unknown name is refused now, not after the first rung
    if shapes is not None and (size is not None or mnk):
        raise UsageError("give either --shapes or --size/--mnk, not both")
    if fresh and resume:
        raise UsageError("--fresh starts the journals over and --resume continues them: give "
                         "one of them")

    dev = select_device(device, backend=backend)
    numbers = parse_rungs(rungs) if rungs is not None else None
    if shapes is not None:
        problems = parse_sizes(shapes, "--shapes")
    elif size is not None or mnk:
        problems = [problem_from_options(size, mnk, default_size(dev))]
    else:
        problems = None
    bounded = budget is None and time_s is None and not exhaustive
    steps = plan_steps(dev, numbers, problems, bounded, time_s)
    only = parse_only(only_specs, [get_rung(n) for n in sorted({s.rung for s in steps})])
    options = TuneOptions(strategy="exhaustive" if exhaustive else strategy, budget=budget,
                          time_s=time_s, seed=seed, heuristics=not no_heuristics,
                          confirm=confirm)
    run = TuneRun(dev, steps, bounded, options, only, repeats, warmup, jobs, fresh,
                  journal_file, launch_timeout, build_timeout, command_line(), COMMAND)
    results = results_dir()

    out.say(f"tuning on device {dev.index}: {dev.name} ({dev.platform}, driver "
            f"{dev.driver_version})")
    if bounded:
        out.say("plan (no --budget, --time or --exhaustive given):")
        out.say(plan_table(dev, steps, out.layout))
    prepared = run.prepare(results, say=out.say, note=out.note, layout=out.layout)
    data = {"format": FORMAT, "device": dev.to_json(), "command": run.command,
            "bounded": bounded, "dry_run": dry_run,
            "plan": [{"rung": s.rung, "shape": list(s.shape), "seconds": s.seconds}
                     for s in steps],
            "configurations": sum(shape.configurations for shape in prepared),
            "database": None, "journals": [str(p) for shape in prepared
                                           for p, _ in shape.journals], "rungs": []}
    if exhaustive:
        total = sum(shape.configurations for shape in prepared)
        per = SECONDS_PER_CONFIG["CPU" if dev.is_cpu else "GPU"]
        out.say(f"\n--exhaustive: {total} configurations, about {total * per / 60:.0f} "
                f"minutes at ~{per:g} s each")
    if dry_run:
        out.write(data, csv_text([]))
        return
    db = load(dev, Path(database_file) if database_file else None)
    check_writable("--database" if database_file else "tuning database", db.path)

    result = run.measure(prepared, db, note=out.note)
    if result.outcomes:
        tuned = [shape for shape, _ in result.outcomes]
        out.say("")
        out.table(summary_table([o for _, o in result.outcomes], out.layout,
                                tuned if len(set(tuned)) > 1 else None))
        out.say(f"\ndatabase: {result.database}")
        if bounded:
            out.say(GO_FURTHER)
    rows = outcome_rows(result.outcomes)
    data.update(database=str(result.database), rungs=rows)
    out.write(data, csv_text([{**r, "shape": "x".join(map(str, r["shape"])),
                               "failed": " ".join(f"{k}={v}" for k, v in r["failed"].items()),
                               "params": params_text(r["params"] or {})}
                              for r in rows]))
