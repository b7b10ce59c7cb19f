"""`clgemm ladder`: every rung on one device at one size, step by step; or with --vs-defaults,
each tuned rung against its defaults."""

from __future__ import annotations

from typing import Any

import click

from clgemm.backends import select_device
from clgemm.cli.ladder_tables import ladder_table, tuning_notes, vs_defaults_table
from clgemm.cli.options import (bound_options, command_line, default_size_options, device_options,
                                output_options, param_option, parse_param_options,
                                problem_from_options, timing_options)
from clgemm.cli.output import Output, progress
from clgemm.configs.configuration import Config, configure_all
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.core.tables import csv_text
from clgemm.devices.hardware import Overrides, hardware_for_device
from clgemm.devices.info import DeviceInfo
from clgemm.measure.ladder import (DEFAULT_REPEATS, compare_with_defaults, default_size,
                                   ladder_rows, nearest_size, run_ladder, vs_defaults_rows)
from clgemm.measure.rung_runner import check_workspace
from clgemm.rungs import Rung, get_rung, parse_rungs
from clgemm.tuner.first_launch import trial_failures

#: alternating rounds of --vs-defaults when --repeats is not given
VS_DEFAULTS_ROUNDS = 10


@click.command()
@device_options
@default_size_options
@click.option("--rungs", "-r", default="all", show_default=True, help="e.g. 1-5 or 1,3,6-10")
@param_option("[RUNG:]NAME=VALUE, repeatable; RUNG a number or a kernel name (e.g. -p "
              "3:WPT=4, -p tiled:TSK=16)")
@timing_options(repeats_help=f"timed launches per rung, the median reported (default: "
                             f"{DEFAULT_REPEATS['CPU'][1]} on a CPU device, "
                             f"{DEFAULT_REPEATS['GPU'][1]} on a GPU)",
                warmup_help=f"untimed launches before timing (default: "
                            f"{DEFAULT_REPEATS['CPU'][0]} on a CPU device, "
                            f"{DEFAULT_REPEATS['GPU'][0]} on a GPU)")
@output_options(csv=True)
@click.option("--defaults", "use_defaults", is_flag=True,
              help="ignore tuned parameters from the database; start from the defaults")
@click.option("--vs-defaults", "vs_defaults", is_flag=True,
              help="instead of the ladder, measure each tuned rung against its defaults in "
                   f"alternating rounds (--repeats rounds, default {VS_DEFAULTS_ROUNDS})")
@bound_options
def ladder(device: str | None, backend: str | None, size: int | None,
           mnk: tuple[int, int, int] | None, rungs: str, param_opts: tuple[str, ...],
           repeats: int | None, warmup: int | None, use_defaults: bool, vs_defaults: bool,
           overrides: Overrides, out: Output) -> None:
    """Run every rung on one device and compare them step by step.

    Rungs 1-9 run only where M, N and K are multiples of their tiles; at any other size they
    are listed as unsupported-size, and the lines under the table say what each needs and the
    nearest size at which every selected rung runs."""
    dev = select_device(device, backend=backend)
    hardware = hardware_for_device(dev, overrides)
    problem = problem_from_options(size, mnk, default_size(dev))
    numbers = parse_rungs(rungs)
    user = parse_param_options(param_opts, numbers)
    configs_by_rung = configure_all(dev, numbers, problem.as_list(), user,
                                    stored=not use_defaults)
    check_workspace(dev, problem, _with_defaults(configs_by_rung, vs_defaults),
                    vendor_c=not vs_defaults)
    trial_failures = _without_failed_trials(dev, configs_by_rung)
    if trial_failures:  # a rung now runs its defaults, which may ask more of the workspace
        check_workspace(dev, problem, _with_defaults(configs_by_rung, vs_defaults),
                        vendor_c=not vs_defaults)
    chosen = {n: dict(c.params) for n, c in configs_by_rung.items()}
    sources = {n: c.source for n, c in configs_by_rung.items()}
    if vs_defaults:
        _tuned_vs_defaults(dev, problem, {n: chosen[n] for n in numbers
                                          if sources[n] not in ("default", "user")},
                           repeats, out)
        return
    out.note(f"ladder on device {dev.index}: {dev.name}, M={problem.m} N={problem.n} "
             f"K={problem.k}")
    run = run_ladder(dev, numbers, problem, params=chosen, sources=sources, warmup=warmup,
                     repeats=repeats, command=command_line(), progress=progress)
    run.hardware = hardware
    run.trial_failures = {n: why for n, (why, _) in trial_failures.items()}
    run.runs_all_at = nearest_size(problem, lambda p: {
        n: c.params for n, c in configure_all(dev, numbers, p.as_list(), user,
                                              stored=not use_defaults).items()})
    out.table(ladder_table(run, out.layout))
    for line in ([note for _, note in trial_failures.values()]
                 + tuning_notes(dev, numbers, sources, use_defaults)):
        out.note(line)
    out.write(run.to_json(), csv_text(ladder_rows(run)))


def _with_defaults(configs: dict[int, Config],
                   vs_defaults: bool) -> list[tuple[Rung, dict[str, int]]]:
    """What the workspace must serve: each rung's configuration, and its defaults beside it
    where --vs-defaults measures both."""
    out = [(c.record, dict(c.params)) for c in configs.values()]
    return out + ([(c.record, c.record.defaults()) for c in configs.values()] if vs_defaults
                  else [])


def _without_failed_trials(dev: DeviceInfo,
                           configs: dict[int, Config]) -> dict[int, tuple[str, str]]:
    """Each borrowed configuration tried first in a child process (`first_launch`); one that
    failed there is replaced by its rung's defaults in `configs`, so the ladder still climbs
    every rung. By rung: why it failed, and the line under the table that says so."""
    failures = trial_failures(dev, configs.values(), progress)
    out = {}
    for number, config in list(configs.items()):
        why = failures.get(config.key)
        if why is not None:
            out[number] = (why, f"rung {number}: the configuration of {config.source} "
                                f"({config.text()}) failed its trial launch here ({why}); the "
                                f"rung ran its defaults")
            configs[number] = Config(number, get_rung(number).defaults(), "default")
    return out


def _tuned_vs_defaults(dev: DeviceInfo, problem: Problem, tuned: dict[int, dict[str, Any]],
                       rounds: int | None, out: Output) -> None:
    if not tuned:
        raise UsageError(f"no tuned parameters for {dev.name} near M={problem.m} N={problem.n} "
                         f"K={problem.k} among the selected rungs (run 'clgemm tune' first)")
    result = compare_with_defaults(dev, problem, tuned, rounds=rounds or VS_DEFAULTS_ROUNDS,
                                   command=command_line(), progress=progress)
    out.table(vs_defaults_table(result, out.layout))
    out.write(result, csv_text(vs_defaults_rows(result)))
