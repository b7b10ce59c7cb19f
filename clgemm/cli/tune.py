"""`clgemm tune`: the tuner's command. Parses its options into the run's settings and prints;
the run itself, its checks included, is `clgemm.tuner.tune_run.Tuning`.

Everything that can be refused is refused before the first kernel is built (unknown strategy,
bad budget, a journal of another device or one another run has open, a foreign database), so a
mistake costs a second, not the first hour of a tuning run. A journal of the same device, size
and rungs is reused as a cache; --fresh moves it aside and starts a new one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import click

from clgemm.cli.options import (command_line, device_options, output_options, size_options,
                                timing_options)
from clgemm.cli.output import Output
from clgemm.core.errors import ClgemmError, UsageError
from clgemm.core.files import is_regular_file
from clgemm.core.tables import csv_text, fit_lines, params_text
from clgemm.tuner.journal import COMMAND
from clgemm.tuner.plan import GO_FURTHER, plan_table
from clgemm.tuner.replay import compare
from clgemm.tuner.rung_tune import AUTO_PARTIAL
from clgemm.tuner.settings import LOCAL, TuneSettings, only_from_specs
from clgemm.tuner.shape_tune import PreparedShape, outcome_rows, summary_table
from clgemm.tuner.strategies import STRATEGIES
from clgemm.tuner.tune_run import (ALL, TuneReport, TuneResult, TuneRun, Tuning, device_line,
                                   tune_every_device)

#: rough seconds per configuration, for the estimate --exhaustive prints first
SECONDS_PER_CONFIG = {"CPU": 1.0, "GPU": 0.3}
#: the "format" of what `clgemm tune --json` writes
FORMAT = "clgemm-tune"
#: the "format" of what `clgemm tune --device all --json` writes
FORMAT_ALL = "clgemm-tune-all"


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
              help="several shapes in one run: comma list of S, MxNxK or BATCHxMxNxK (a stack "
                   "of BATCH products in one launch), e.g. 1024,4096x4096x128,1000x64x64x64")
@click.option("--exhaustive", is_flag=True,
              help="measure every configuration the funnel keeps (the estimated time is printed "
                   "first)")
@click.option("--strategy", default="auto", show_default=True,
              metavar="|".join(["auto", *STRATEGIES]), help=strategy_help())
@click.option("--budget", type=int, default=None,
              help="at most this many evaluations per rung")
@click.option("--time", "time_s", type=float, default=None,
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
@click.option("--jobs", "-j", type=int, default=None,
              help="pre-building processes (default: one per core; 0: build only when "
                   "measuring); with --cluster, each host's, shared by its workers")
@timing_options(repeats_help="timed launches per evaluation",
                warmup_help="untimed launches before timing")
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
@click.option("--cluster", default=None, is_flag=False, flag_value=LOCAL, metavar="[ADDRESS]",
              help="spread the evaluations over the workers of a Dask cluster: alone, one "
                   "started on this machine with a worker per device of the tuned model; with "
                   "a scheduler's address (tcp://HOST:8786), that cluster's workers (needs "
                   "pip install 'clgemm[cluster]'; docs/tuning.md)")
@click.option("--workers", type=int, default=None,
              help="with --cluster alone: the local cluster's workers (default: one per device "
                   "of the model)")
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
         cluster: str | None, workers: int | None, dry_run: bool, replay_file: str | None,
         out: Output) -> None:
    """Search each rung's parameters on one device (--device all: every device at once, each
    into its own database, identical devices sharing theirs and the steps); store the best
    verified configuration.

    Without --budget, --time or --exhaustive the run is bounded: the whole ladder and the shapes
    gemm() runs, at most 10 minutes on a GPU and 15 on a CPU, each search starting from the best
    configurations known for the device, its family and its type. Results go to the per-user
    data folder ($CLGEMM_RESULTS or --database choose another place)."""
    settings = TuneSettings.given(
        COMMAND, device=device, backend=backend, rungs=rungs,
        shapes=_shapes(shapes, size, mnk), seconds=time_s, budget=budget,
        exhaustive=exhaustive, strategy=strategy, only=only_from_specs(only_specs),
        heuristics=not no_heuristics, seed=seed, confirm=confirm, repeats=repeats,
        warmup=warmup, jobs=jobs, fresh=fresh, resume=resume, journal=journal_file,
        database=database_file, launch_timeout=launch_timeout, build_timeout=build_timeout,
        cluster=cluster, workers=workers, command=command_line())
    if replay_file:
        _compare(replay_file, out)
        return
    if isinstance(device, str) and device.strip().lower() == ALL:
        if dry_run:
            raise UsageError("--dry-run plans one device: give its number, not --device all")
        _every_device(settings, out)
        return
    report = CommandReport(out, dry_run, exhaustive)
    tuning = Tuning(settings, report)
    if dry_run:
        tuning.prepare()
    else:
        tuning.run()
    out.write(report.data, csv_text(report.rows))


def _every_device(settings: TuneSettings, out: Output) -> None:
    """--device all: every device tuned at once, each into its own database (identical ones
    sharing theirs and the run's steps); each device's summary once all are done, and a run
    that failed named with its error."""
    done = tune_every_device(settings, out.note)
    rows: list[dict[str, Any]] = []
    data: dict[str, Any] = {"format": FORMAT_ALL, "command": settings.command, "devices": []}
    failed = []
    for dev, result in done:
        out.say("")
        out.say(device_line(dev))
        if isinstance(result, BaseException):
            message = str(result) if isinstance(result, ClgemmError) else repr(result)
            out.say(f"error: {message}")
            failed.append(f"device {dev.index}")
            data["devices"].append({"device": dev.to_json(), "error": message})
            continue
        if result.outcomes:
            out.table(_summary(result, out))
        out.say(f"database: {result.database}")
        these = outcome_rows(result.outcomes)
        data["devices"].append({"device": dev.to_json(), "database": str(result.database),
                                "journals": [str(p) for p in result.journals], "rungs": these})
        rows += [{"device": dev.index, **r} for r in _csv_rows(these)]
    out.write(data, csv_text(rows))
    if failed:
        raise ClgemmError(f"--device all: the tune of {', '.join(failed)} failed (above)")


def _summary(result: TuneResult, out: Output) -> str:
    """A run's summary table, with a shape column where it tuned several shapes."""
    tuned = [shape for shape, _ in result.outcomes]
    return summary_table([o for _, o in result.outcomes], out.layout,
                         tuned if len(set(tuned)) > 1 else None)


def _csv_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`outcome_rows` as the CSV has them: shape, failures and parameters as text."""
    return [{**r, "shape": "x".join(map(str, r["shape"])),
             "failed": " ".join(f"{k}={v}" for k, v in r["failed"].items()),
             "params": params_text(r["params"] or {})} for r in rows]


def _shapes(shapes: str | None, size: int | None,
            mnk: tuple[int, int, int] | None) -> str | int | tuple[int, int, int] | None:
    """--shapes, --size or --mnk, as the settings take shapes: one of them at most."""
    if shapes is not None and (size is not None or mnk):
        raise UsageError("give either --shapes or --size/--mnk, not both")
    if size is not None and mnk:
        raise UsageError("give either --size or --mnk, not both")
    return shapes if shapes is not None else (mnk or size)


def _compare(replay_file: str, out: Output) -> None:
    """--compare-strategies: every strategy replayed against an exhaustive journal."""
    if not Path(replay_file).exists():
        raise UsageError(f"--compare-strategies: no such file {replay_file}")
    if not is_regular_file(replay_file):
        raise UsageError(f"--compare-strategies {replay_file}: not a regular file")
    if out.json_file or out.csv_file:
        raise UsageError("--compare-strategies prints a table only: leave out --json and --csv")
    out.table("\n".join(fit_lines(compare(Path(replay_file)).splitlines(), out.layout)))


class CommandReport(TuneReport):
    """The command's telling of a run: the report and messages through its `Output`, the plan
    under its heading, the time --exhaustive will take, the summary with a shape column where
    several shapes were tuned, and `data` and `rows`, what --json and --csv write."""

    def __init__(self, out: Output, dry_run: bool, exhaustive: bool) -> None:
        super().__init__(verbose=True)
        self.out = out
        self.layout = out.layout
        self.dry_run = dry_run
        self.exhaustive = exhaustive
        self.data: dict[str, Any] = {}
        self.rows: list[dict[str, Any]] = []

    def say(self, text: str) -> None:
        self.out.say(text)

    def note(self, text: str) -> None:
        self.out.note(text)

    def planned(self, run: TuneRun) -> None:
        self.say(device_line(run.device))
        if run.bounded:
            self.say("plan (no --budget, --time or --exhaustive given):")
            self.say(plan_table(run.device, run.steps, self.layout))

    def prepared(self, run: TuneRun, shapes: Sequence[PreparedShape]) -> None:
        total = sum(shape.configurations for shape in shapes)
        self.data = {"format": FORMAT, "device": run.device.to_json(), "command": run.command,
                     "bounded": run.bounded, "dry_run": self.dry_run,
                     "plan": [{"rung": s.rung, "shape": list(s.shape), "seconds": s.seconds}
                              for s in run.steps],
                     "configurations": total, "database": None,
                     "journals": [str(p) for shape in shapes for p, _ in shape.journals],
                     "rungs": []}
        if self.exhaustive:
            per = SECONDS_PER_CONFIG["CPU" if run.device.is_cpu else "GPU"]
            self.say(f"\n--exhaustive: {total} configurations, about {total * per / 60:.0f} "
                     f"minutes at ~{per:g} s each")

    def finished(self, result: TuneResult) -> None:
        if result.outcomes:
            self.say("")
            self.out.table(_summary(result, self.out))
            self.say(f"\ndatabase: {result.database}")
            if self.data["bounded"]:
                self.say(GO_FURTHER)
        rows = outcome_rows(result.outcomes)
        self.data.update(database=str(result.database), rungs=rows)
        self.rows = _csv_rows(rows)
