"""`clgemm model`: the performance bound of each rung on a device, without running anything; the
bound is `clgemm.model.bound`, the device may come from a recorded file (`clgemm.devices.record`)."""

from __future__ import annotations

import click

from clgemm.backends import select_device
from clgemm.cli.options import (RUNG, bound_options, default_size_options, device_options,
                                output_options, param_option, parse_param_options,
                                problem_from_options)
from clgemm.cli.output import Output
from clgemm.configs.configuration import configure_all
from clgemm.core.errors import UsageError
from clgemm.core.tables import fit_lines
from clgemm.devices.hardware import Overrides, hardware_for_device
from clgemm.devices.record import device_from_record
from clgemm.measure.ladder import default_size
from clgemm.model.bound import bound, bounds_table, explain
from clgemm.model.counters import read_counters
from clgemm.model.gap import account, explain_account
from clgemm.model.inner_loops import STEPS
from clgemm.rungs import REGISTRY, get_rung, kernel_label

#: the "format" of what `clgemm model --json` writes
FORMAT = "clgemm-model"

#: what the bound leaves out on a GPU, which a launch's counters measure
UNCOUNTED = ("not in the bound: instructions besides the loads, FMAs and tile copies "
             "(addresses, the loop), and clocks in which no sub-group of a scheduler is ready; "
             "--counters with Nsight Compute's printout of a launch measures both")


@click.command()
@device_options
@click.option("--device-record", type=click.Path(dir_okay=False), default=None,
              help="instead of --device: the device recorded in a ladder or bench JSON file")
@click.option("--rung", "-r", "rung_number", type=RUNG, default=None,
              help="show every term for this rung: 1-10, or a library kernel by number or name "
                   "(direct, tiled, tiled-any) (default: one line per rung)")
@param_option()
@default_size_options
@click.option("--defaults", "use_defaults", is_flag=True,
              help="ignore tuned parameters from the database; start from the defaults")
@click.option("--counters", "counter_files", multiple=True, type=click.Path(dir_okay=False),
              help="with --rung: Nsight Compute's printout of one launch of that "
                   "configuration at that size (repeatable: sections and --metrics from "
                   "separate runs); sets where its share of the peak went beside the bound")
@output_options()
@bound_options
def model(device: str | None, backend: str | None, device_record: str | None,
          rung_number: int | None, param_opts: tuple[str, ...], size: int | None,
          mnk: tuple[int, int, int] | None, use_defaults: bool, counter_files: tuple[str, ...],
          overrides: Overrides, out: Output) -> None:
    """Upper bound on a rung's GFLOP/s on a device, term by term, without running anything."""
    if device_record and (device is not None or backend is not None):
        raise UsageError("give either --device-record or --device/--backend, not both")
    if counter_files and rung_number is None:
        raise UsageError("--counters needs --rung: the counters are of one configuration")
    counters = read_counters(counter_files) if counter_files else None
    dev = device_from_record(device_record) if device_record else select_device(
        device, backend=backend)
    hw = hardware_for_device(dev, overrides)
    problem = problem_from_options(size, mnk, default_size(dev))
    numbers = [get_rung(rung_number).number] if rung_number is not None else sorted(REGISTRY)
    unmodelled = [n for n in numbers if n not in STEPS]
    if unmodelled:
        raise UsageError(f"the model has no count of {kernel_label(unmodelled[0])}'s inner "
                         f"loop")
    overrides_by_rung = parse_param_options(param_opts, numbers)
    configs = configure_all(dev, numbers, problem.as_list(), overrides_by_rung,
                            stored=not use_defaults)
    results = []
    for n in numbers:
        rung = get_rung(n)
        params, source = dict(configs[n].params), configs[n].source
        if rung_number is not None:  # asked for by name: say why not
            configs[n].require(dev.limits(), problem.m, problem.n, problem.k)
        why = rung.size_problem(params, problem.m, problem.n, problem.k)
        bad = rung.first_violation(params, dev.limits())
        if bad is not None or why:
            results.append({"rung": n, "params": params, "source": source,
                            "status": bad.name if bad else why})
            continue
        b = bound(rung, params, problem, hw)
        results.append({"rung": n, "params": params, "source": source, "status": "ok",
                        "bound": b.to_json()})
        if rung_number is not None:
            detail = explain(b, out.layout)
            if counters is not None:
                gap = account(counters, hw, problem.flops, b)
                detail += explain_account(gap, out.layout)
                results[-1]["measured"] = gap.to_json()
            elif hw.lockstep:
                detail += fit_lines([UNCOUNTED], out.layout)
    if rung_number is not None:
        text = detail
    else:
        text = fit_lines([f"{dev.name}  M={problem.m} N={problem.n} K={problem.k}"], out.layout)
        text.append(bounds_table(results, hw, out.layout))
    out.table("\n".join(text + fit_lines(hw.summary(), out.layout)))
    out.write({"format": FORMAT, "device": dev.to_json(), "size": problem.as_list(),
               "hardware": hw.to_json(), "rungs": results})
