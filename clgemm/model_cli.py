"""`clgemm model`, and the options that replace the bound's hardware figures on every command
that shows a bound (ladder, bench, model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import click

from . import lookup
from .errors import UsageError
from .hardware import Hardware, Overrides, hardware_for_device


def bound_options(command: Callable) -> Callable:
    """--peak-gflops, --local-gbps and --mem-gbps, for a device the table does not know (or
    knows wrongly)."""
    options = [
        click.option("--peak-gflops", type=float, default=None,
                     help="performance bound: the device's FP32 peak in GFLOP/s, instead of "
                          "lanes x compute units x clock x 2 from the table"),
        click.option("--local-gbps", type=float, default=None,
                     help="performance bound: local-memory bandwidth per compute unit, GB/s"),
        click.option("--mem-gbps", type=float, default=None,
                     help="performance bound: DRAM bandwidth of the device, GB/s"),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def hardware_from_options(device: Any, peak_gflops: float | None, local_gbps: float | None,
                          mem_gbps: float | None) -> Hardware:
    """The device's figures with the command line's overrides (refused if not positive)."""
    return hardware_for_device(device, Overrides(peak_gflops, local_gbps, mem_gbps))


def _count(least: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= least


def _counts(v: Any) -> bool:
    return isinstance(v, list) and all(_count(1)(x) for x in v)


_TEXT = (lambda v: isinstance(v, str), "a string")
_NATURAL = (_count(0), "a non-negative integer")
_POSITIVE = (_count(1), "a positive integer")

#: the fields a device record needs, with what each must be (a hand-edited record is refused
#: by field name, before the model divides by or iterates over a wrong value)
RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "index": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    **{name: _TEXT for name in ("backend", "platform", "name", "type", "vendor",
                                "driver_version", "version")},
    **{name: _POSITIVE for name in ("compute_units", "max_work_group_size", "global_mem_bytes",
                                    "local_mem_bytes", "max_alloc_bytes")},
    # some drivers report no clock; the bound then takes the table's
    "clock_mhz": _NATURAL,
    "max_work_item_sizes": (_counts, "a list of positive integers"),
}
OPTIONAL_RECORD_FIELDS = {
    "sub_group_sizes": (lambda v: v is None or _counts(v), "a list of positive integers"),
}


def device_from_record(path: str) -> Any:
    """A DeviceInfo from a ladder or bench JSON file (its "device"), or a file holding just
    that record: to reason about a device that is not in this machine."""
    from .devices import DeviceInfo

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"--device-record {path}: cannot read it ({exc})") from None
    record = data.get("device", data) if isinstance(data, dict) else None
    if not isinstance(record, dict):
        raise UsageError(f"--device-record {path}: no device record in it")
    missing = sorted(set(RECORD_FIELDS) - set(record))
    if missing:
        raise UsageError(f"--device-record {path}: the device record lacks "
                         f"{', '.join(missing)}")
    for name, (ok, wanted) in {**RECORD_FIELDS, **OPTIONAL_RECORD_FIELDS}.items():
        if name in record and not ok(record[name]):
            raise UsageError(f"--device-record {path}: {name} must be {wanted}, not "
                             f"{json.dumps(record[name])}")
    fields = {k: record[k] for k in RECORD_FIELDS}
    fields["max_work_item_sizes"] = tuple(fields["max_work_item_sizes"])
    fields["sub_group_sizes"] = tuple(record.get("sub_group_sizes") or ())
    return DeviceInfo(**fields)


@click.command()
@click.option("--device", "-d", default=None,
              help="device index (see 'clgemm devices') or a case-insensitive part of its name")
@click.option("--backend", "-b", type=click.Choice(["opencl", "cuda"]), default=None,
              help="only this backend's devices (an NVIDIA GPU is listed by both)")
@click.option("--device-record", type=click.Path(dir_okay=False), default=None,
              help="instead of --device: the device recorded in a ladder or bench JSON file")
@click.option("--rung", "-r", "rung_number", type=int, default=None,
              help="show every term for this rung (default: one line per rung)")
@click.option("--param", "-p", "param_opts", multiple=True,
              help="[RUNG:]NAME=VALUE, repeatable")
@click.option("--size", "-s", type=int, default=None, help="square size M=N=K")
@click.option("--mnk", type=int, nargs=3, default=None, help="three sizes M N K")
@click.option("--defaults", "use_defaults", is_flag=True,
              help="ignore tuned parameters from the database; start from the defaults")
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of text")
@bound_options
def model(device, backend, device_record, rung_number, param_opts, size, mnk, use_defaults,
          as_json, peak_gflops, local_gbps, mem_gbps) -> None:
    """Upper bound on a rung's GFLOP/s on a device, term by term, without running anything."""
    from tabulate import tabulate

    from .cli import _problem
    from .devices import select_device
    from .ladder import default_size
    from .model import bound, explain
    from .params_cli import parse_param_options
    from .rungs import REGISTRY, get_rung

    if device_record and (device is not None or backend is not None):
        raise UsageError("give either --device-record or --device/--backend, not both")
    dev = device_from_record(device_record) if device_record else select_device(
        device, backend=backend)
    hw = hardware_from_options(dev, peak_gflops, local_gbps, mem_gbps)
    problem = _problem(size, mnk, default_size(dev))
    numbers = [get_rung(rung_number).number] if rung_number is not None else sorted(REGISTRY)
    overrides = parse_param_options(param_opts, numbers)
    found = {} if use_defaults else lookup.tuned_params(dev, numbers, problem.as_list())
    results, rows = [], []
    for n in numbers:
        rung = get_rung(n)
        params = rung.resolve({**(found[n].params if n in found else {}),
                               **overrides.get(n, {})})
        source = "user" if n in overrides else (found[n].label if n in found else "default")
        why = rung.size_problem(params, problem.m, problem.n, problem.k)
        bad = rung.first_violation(params, dev.limits())
        if rung_number is not None or n in overrides:  # asked for by name: refuse, say why
            rung.validate(params, dev.limits())
            if why:
                raise UsageError(f"rung {n} with {rung.params_text(params)} cannot do "
                                 f"M={problem.m} N={problem.n} K={problem.k}: {why}")
        if bad is not None or why:
            rows.append([n, rung.params_text(params), source, "", "", "",
                         f"not run here: {bad.name if bad else why}"])
            results.append({"rung": n, "params": params, "source": source,
                            "status": bad.name if bad else why})
            continue
        b = bound(rung, params, problem, hw)
        results.append({"rung": n, "params": params, "source": source, "status": "ok",
                        "bound": b.to_json()})
        rows.append([n, rung.params_text(params), source, f"{b.gflops:,.0f}",
                     f"{b.gflops / hw.peak_gflops:.1%}", b.limit, b.term(b.limit).detail])
        if rung_number is not None:
            detail = explain(b)
    if as_json:
        click.echo(json.dumps({"device": dev.to_json(), "size": problem.as_list(),
                               "hardware": hw.to_json(), "rungs": results}, indent=2))
        return
    if rung_number is not None:
        click.echo("\n".join(detail))
    else:
        click.echo(f"{dev.name}  M={problem.m} N={problem.n} K={problem.k}")
        click.echo(tabulate(rows, headers=["rung", "parameters", "config", "bound GFLOP/s",
                                           "of peak", "limited by", "why"],
                            disable_numparse=True))
    click.echo("\n".join(hw.summary()))
