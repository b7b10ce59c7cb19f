"""`clgemm bench`: the best rung per shape against the libraries, or with --call what a user's
call costs; the measuring is in `clgemm.bench` and `clgemm.callbench`."""

from __future__ import annotations

import click

from .. import api, callbench
from ..bench import MAX_REPEATS, MIN_REPEATS, TARGET_S, default_sizes, run_bench
from ..backends import select_device
from ..devices import DeviceInfo
from ..errors import UsageError
from ..hardware import Overrides, hardware_for_device
from ..rungs import parse_rungs
from ..problem import parse_sizes
from ..tables import csv_text
from .options import bound_options, command_line, device_options, output_options, timing_options
from .output import Output, progress


def _bench_calls(dev: DeviceInfo, sizes: str | None, arrays: str | None,
                 clblast_file: str | None, out: Output) -> None:
    """`bench --call`: callbench's engine, its table, its JSON."""
    clblast = callbench.read_clblast_params(clblast_file) if clblast_file else None
    mode = arrays or ("numpy" if dev.is_cpu else "device")
    shapes = ([(p.m, p.n, p.k) for p in parse_sizes(sizes)] if sizes else
              list(callbench.CPU_SHAPES if dev.is_cpu else callbench.GPU_SHAPES))
    backend = api.backend_for(dev)
    out.note(f"bench --call on device {dev.index}: {dev.name} ({dev.backend}), "
             f"{len(shapes)} shapes, {mode} arrays")
    rows = callbench.run_bench(backend, shapes, mode, clblast[0] if clblast else None,
                               progress=progress)
    data = callbench.to_json(backend, rows, command_line(), mode, clblast)
    out.table(callbench.table(data, out.layout))
    out.write(data, csv_text(callbench.csv_rows(data)))


@click.command()
@device_options
@click.option("--sizes", default=None,
              help="comma list of S (square) or MxNxK, e.g. 1024,1000,4096x4096x128 (default: "
                   "a set for the device type)")
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
@bound_options
def bench(device: str | None, backend: str | None, sizes: str | None, rungs: str | None,
          repeats: int | None, warmup: int | None, call_mode: bool, arrays: str | None,
          clblast_file: str | None, overrides: Overrides, out: Output) -> None:
    """The best rung per shape against cuBLAS/CLBlast and NumPy, measured side by side; with
    --call, gemm() end to end against the libraries' own calls."""
    if call_mode:
        _bench_calls(select_device(device, backend=backend), sizes, arrays, clblast_file, out)
        return
    for flag, value in (("--arrays", arrays), ("--clblast-params", clblast_file)):
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
                    command=command_line(), progress=progress, hardware=hardware)
    out.table(run.table(out.layout))
    out.write(run.to_json(), run.csv_text())
