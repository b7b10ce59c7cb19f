"""`clgemm bench`: the best rung per shape against the libraries, or with --call what a user's
call costs; the measuring is in `clgemm.measure.bench` and `clgemm.measure.call_bench`."""

from __future__ import annotations

import click

from clgemm.backends import select_device
from clgemm.cli.options import (bound_options, command_line, device_options, output_options,
                                timing_options)
from clgemm.cli.output import Output, progress
from clgemm.core.errors import UsageError
from clgemm.core.problem import parse_sizes
from clgemm.core.tables import csv_text
from clgemm.devices.hardware import Overrides, hardware_for_device
from clgemm.devices.info import DeviceInfo
from clgemm.library import gemm as api
from clgemm.measure import call_bench
from clgemm.measure.bench import MAX_REPEATS, MIN_REPEATS, TARGET_S, default_sizes, run_bench
from clgemm.rungs import parse_rungs
from clgemm.tuner.first_launch import Trials


def _call_shapes(dev: DeviceInfo, sizes: str | None) -> list[tuple[int, ...]]:
    """--sizes for --call: a named set, a list of sizes, or the default set of the device type."""
    if sizes is None:
        return list(call_bench.CPU_SHAPES if dev.is_cpu else call_bench.GPU_SHAPES)
    if sizes.strip() in call_bench.NAMED_SHAPES:
        return list(call_bench.NAMED_SHAPES[sizes.strip()])
    return [(p.m, p.n, p.k) for p in parse_sizes(sizes)]


def _bench_calls(dev: DeviceInfo, sizes: str | None, arrays: str | None,
                 clblast_file: str | None, c_given: bool, out: Output) -> None:
    """`bench --call`: callbench's engine, its table, its JSON."""
    clblast = call_bench.read_clblast_params(clblast_file) if clblast_file else None
    mode = arrays or ("numpy" if dev.is_cpu else "device")
    shapes = _call_shapes(dev, sizes)
    backend = api.backend_for(dev)
    out.note(f"bench --call on device {dev.index}: {dev.name} ({dev.backend}), "
             f"{len(shapes)} shapes, {mode} arrays, "
             f"{'C given to every call' if c_given else 'a new C per call'}")
    rows = call_bench.run_bench(backend, shapes, mode, clblast[0] if clblast else None,
                               progress=progress, c_given=c_given)
    data = call_bench.to_json(backend, rows, command_line(), mode, clblast)
    out.table(call_bench.table(data, out.layout))
    out.write(data, csv_text(call_bench.csv_rows(data)))


@click.command()
@device_options
@click.option("--sizes", default=None,
              help="comma list of S (square) or MxNxK, e.g. 1024,1000,4096x4096x128 (default: "
                   "a set for the device type); with --call also a named set: "
                   + ", ".join(call_bench.NAMED_SHAPES))
@click.option("--rungs", "-r", default=None,
              help="rungs to measure, e.g. 6-10,tiled (default: 6-8, tiled, tiled-any plus "
                   "gemm's own pick)")
@timing_options(repeats_help=f"timed runs per contender (default: adaptive, about {TARGET_S:g} s "
                             f"of timed work each, {MIN_REPEATS} to {MAX_REPEATS['CPU']} on a "
                             f"CPU, {MIN_REPEATS} to {MAX_REPEATS['GPU']} on a GPU)",
                warmup_help="untimed rounds before timing")
@output_options(csv=True)
@click.option("--call", "call_mode", is_flag=True,
              help="time what a user calls: gemm() end to end beside cuBLAS's and CLBlast's "
                   "own calls, with the chosen kernel's time and the overhead")
@click.option("--arrays", type=click.Choice(["device", "numpy"]), default=None,
              help="with --call: device arrays in and out (default on GPUs) or NumPy arrays "
                   "(default on CPUs)")
@click.option("--clblast-params", "clblast_file", type=click.Path(dir_okay=False), default=None,
              help="with --call: a JSON file of CLBlast Xgemm parameters tuned for the device "
                   "(its tuner's result), measured as 'CLBlast (tuned)'")
@click.option("--c-given", is_flag=True,
              help="with --call: every call writes into a C it is given (gemm(a, b, c), "
                   "matmul(a, b, out=c)) instead of making a new one")
@bound_options
def bench(device: str | None, backend: str | None, sizes: str | None, rungs: str | None,
          repeats: int | None, warmup: int | None, call_mode: bool, arrays: str | None,
          clblast_file: str | None, c_given: bool, overrides: Overrides, out: Output) -> None:
    """The best rung per shape against cuBLAS/CLBlast and NumPy, measured side by side; with
    --call, gemm() end to end against the libraries' own calls."""
    if call_mode:
        _bench_calls(select_device(device, backend=backend), sizes, arrays, clblast_file,
                     c_given, out)
        return
    for flag, value in (("--arrays", arrays), ("--clblast-params", clblast_file),
                        ("--c-given", c_given or None)):
        if value is not None:  # accepted and ignored, a user would believe it measured
            raise UsageError(f"{flag} {value}: applies only with --call (the bench of gemm()'s "
                             f"whole call)")

    problems = parse_sizes(sizes) if sizes is not None else None
    numbers = parse_rungs(rungs) if rungs is not None else None
    dev = select_device(device, backend=backend)
    hardware = hardware_for_device(dev, overrides)
    problems = problems or default_sizes(dev)
    out.note(f"bench on device {dev.index}: {dev.name} ({dev.backend}), "
             f"{len(problems)} shapes")
    run = run_bench(dev, problems, numbers, repeats=repeats, warmup=warmup,
                    command=command_line(), progress=progress, hardware=hardware,
                    trial=Trials(dev, progress))
    out.table(run.table(out.layout))
    out.write(run.to_json(), run.csv_text())
