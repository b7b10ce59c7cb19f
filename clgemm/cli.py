"""The `clgemm` command line: parse, call the library, print. Nothing else lives here."""

from __future__ import annotations

import json
import shlex
import sys

import click

from . import lookup
from .devices import list_devices, select_device
from .errors import ClgemmError, UsageError
from .model_cli import bound_options, hardware_from_options, model
from .params_cli import parse_param_options
from .paths import check_writable, write_output
from .rungs import get_rung, parse_rungs
from .runner import Problem, check_workspace

DEVICE_HELP = "device index (see 'clgemm devices') or a case-insensitive part of its name"


def _problem(size: int | None, mnk: tuple[int, int, int] | None, default: int) -> Problem:
    if size is not None and mnk:
        raise UsageError("give either --size or --mnk, not both")
    if mnk:
        return Problem(*mnk)
    return Problem(default, default, default) if size is None else Problem(size, size, size)


def _command_line() -> str:
    return "clgemm " + " ".join(shlex.quote(a) for a in sys.argv[1:])


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="clgemm")
def cli() -> None:
    """A portable OpenCL SGEMM kernel ladder, tuner and benchmark."""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="print JSON instead of a table")
def devices(as_json: bool) -> None:
    """List every device, numbered across platforms."""
    from .report import devices_table

    found = list_devices()
    if as_json:
        click.echo(json.dumps([d.to_json() for d in found], indent=2))
    elif not found:
        click.echo("no OpenCL device found (on Debian: apt-get install pocl-opencl-icd)")
    else:
        click.echo(devices_table(found))
    from .backends.opencl import nvidia_icd_note

    note = nvidia_icd_note()
    if note:
        click.echo(note, err=True)


@cli.command()
@click.option("--device", "-d", default=None, help=DEVICE_HELP)
@click.option("--backend", "-b", type=click.Choice(["opencl", "cuda"]), default=None,
              help="only this backend's devices (an NVIDIA GPU is listed by both)")
@click.option("--size", "-s", type=int, default=None, help="square size M=N=K")
@click.option("--mnk", type=int, nargs=3, default=None, help="three sizes M N K")
@click.option("--rungs", "-r", default="all", show_default=True, help="e.g. 1-5 or 1,3,6-10")
@click.option("--param", "-p", "param_opts", multiple=True,
              help="[RUNG:]NAME=VALUE, repeatable (e.g. -p 3:WPT=4)")
@click.option("--repeats", type=int, default=None, help="timed launches per rung (median)")
@click.option("--warmup", type=int, default=None, help="untimed launches before timing")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), default=None,
              help="also write the results as JSON to this file")
@click.option("--defaults", "use_defaults", is_flag=True,
              help="ignore tuned parameters from the database; start from the defaults")
@click.option("--vs-defaults", "vs_defaults", is_flag=True,
              help="instead of the ladder, measure each tuned rung against its defaults in "
                   "alternating rounds (--repeats rounds, default 10)")
@bound_options
def ladder(device, backend, size, mnk, rungs, param_opts, repeats, warmup, json_file,
           use_defaults, vs_defaults, peak_gflops, local_gbps, mem_gbps) -> None:
    """Run every rung on one device and compare them step by step."""
    from .ladder import default_size, run_ladder
    from .report import ladder_table, tuning_notes

    if json_file:
        check_writable("--json", json_file)
    dev = select_device(device, backend=backend)
    hardware = hardware_from_options(dev, peak_gflops, local_gbps, mem_gbps)
    problem = _problem(size, mnk, default_size(dev))
    numbers = parse_rungs(rungs)
    for name, v in (("--repeats", repeats), ("--warmup", warmup)):
        if v is not None and v < (1 if name == "--repeats" else 0):
            raise UsageError(f"{name} {v}: must be {'positive' if name == '--repeats' else '>= 0'}")
    overrides = parse_param_options(param_opts, numbers)
    found = {} if use_defaults else lookup.tuned_params(dev, numbers, problem.as_list())
    chosen, sources = {}, {}
    for n in numbers:
        rung = get_rung(n)
        chosen[n] = rung.resolve({**(found[n].params if n in found else {}),
                                  **overrides.get(n, {})})
        rung.validate(chosen[n])  # divisibility: refuse by name before anything runs
        sources[n] = "user" if n in overrides else (found[n].label if n in found else "default")
        if n in overrides:  # user-chosen values must also fit the device and the size
            rung.validate(chosen[n], dev.limits())
            why = rung.size_problem(chosen[n], problem.m, problem.n, problem.k)
            if why:
                raise UsageError(f"rung {n} with {rung.params_text(chosen[n])} cannot do "
                                 f"M={problem.m} N={problem.n} K={problem.k}: {why}")
    configs = [(get_rung(n), chosen[n]) for n in numbers]
    if vs_defaults:
        configs += [(get_rung(n), get_rung(n).defaults()) for n in numbers]
    check_workspace(dev, problem, configs, vendor_c=not vs_defaults)
    if vs_defaults:
        _tuned_vs_defaults(dev, problem, {n: chosen[n] for n in numbers
                                          if n in found and n not in overrides},
                           repeats, json_file)
        return
    click.echo(f"ladder on device {dev.index}: {dev.name}, M={problem.m} N={problem.n} "
               f"K={problem.k}", err=True)
    run = run_ladder(dev, numbers, problem, params=chosen, sources=sources, warmup=warmup,
                     repeats=repeats, command=_command_line(),
                     progress=lambda msg: click.echo(f"  {msg}", err=True))
    run.hardware = hardware
    click.echo(ladder_table(run))
    for line in tuning_notes(dev, numbers, sources, use_defaults):
        click.echo(line, err=True)
    if json_file:
        write_output(json_file, json.dumps(run.to_json(), indent=2) + "\n")
        click.echo(f"wrote {json_file}", err=True)


def _tuned_vs_defaults(dev, problem, tuned, rounds, json_file) -> None:
    from tabulate import tabulate

    from .ladder import compare_with_defaults

    if not tuned:
        raise UsageError(f"no tuned parameters for {dev.name} near M={problem.m} N={problem.n} "
                         f"K={problem.k} among the selected rungs (run 'clgemm tune' first)")
    result = compare_with_defaults(dev, problem, tuned, rounds=rounds or 10,
                                   command=_command_line(),
                                   progress=lambda msg: click.echo(f"  {msg}", err=True))
    table = [[r["rung"], " ".join(f"{k}={v}" for k, v in r["tuned"].items()),
              f"{r['tuned_gflops']:.1f}" if "slowdown" in r else "",
              f"{r['default_gflops']:.1f}" if "slowdown" in r else "",
              f"{r['slowdown']:.3f}" if "slowdown" in r else "", r["status"]]
             for r in result["rows"]]
    click.echo(tabulate(table, headers=["rung", "tuned parameters", "tuned GFLOP/s",
                                        "default GFLOP/s", "tuned/default time", "status"],
                        disable_numparse=True))
    if json_file:
        write_output(json_file, json.dumps(result, indent=2) + "\n")
        click.echo(f"wrote {json_file}", err=True)


@cli.command()
@click.argument("rung_number", metavar="RUNG", type=int)
@click.option("--param", "-p", "param_opts", multiple=True, help="NAME=VALUE, repeatable")
def show(rung_number: int, param_opts) -> None:
    """Print a rung's source as it is compiled: the macros set, then the kernel."""
    from .paths import KERNELS

    rung = get_rung(rung_number)
    params = rung.resolve(parse_param_options(param_opts, [rung_number]).get(rung_number))
    rung.validate(params)
    click.echo(f"// rung {rung.number}: {rung.title} ({rung.file}, kernel {rung.kernel})")
    click.echo("// build options:")
    for k, v in rung.macros(params).items():
        click.echo(f"#define {k} {v}")
    for helper in rung.helpers_for(params):
        opts = " ".join(f"-D{k}={v}" for k, v in helper.macros.items())
        click.echo(f"// helper step before it: {helper.name} ({helper.file}: {helper.kernel}, {opts})")
    click.echo((KERNELS / "common.h").read_text())
    click.echo((KERNELS / rung.file).read_text())


@cli.command()
@click.argument("rung_number", metavar="RUNG", type=int)
def explain(rung_number: int) -> None:
    """What a rung adds and teaches, its macros, and its kernel's diff against the rung before."""
    from .course.explain import explain_lines

    colours = {"add": "green", "remove": "red"}
    for kind, line in explain_lines(rung_number):
        click.echo(click.style(line, fg=colours.get(kind)) if kind in colours else line)


@cli.command()
@click.option("--check", is_flag=True,
              help="write nothing; exit 1 naming every generated block or plot that is stale")
def report(check: bool) -> None:
    """Regenerate the course's pages (ladder/), results/README.md and the plots from results/."""
    from .course.build import StaleError, report as run_report
    from .paths import ROOT

    out = run_report(ROOT, write=not check, say=click.echo)
    if check:
        stale = out.stale_blocks + [f"{p}: out of date or missing" for p in out.stale_plots]
        for item in stale:
            click.echo(f"stale: {item}")
        if stale:
            raise StaleError(f"{len(stale)} generated part(s) are stale: run 'clgemm report'")
        click.echo("every generated block and plot is up to date")
    elif not out.written and not out.drawn:
        click.echo("nothing to regenerate: every generated block and plot is up to date")


def main(argv: list[str] | None = None) -> int:
    """Entry point: every user mistake becomes one 'error:' line and exit status 2."""
    try:
        cli.main(args=argv, prog_name="clgemm", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return 130
    except click.exceptions.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return 2
    except ClgemmError as exc:
        click.echo(f"error: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    return 0


from .tuner.command import tune  # noqa: E402  (the command imports cli's helpers lazily)
cli.add_command(tune)
from .verify import verify  # noqa: E402
cli.add_command(verify)
from .bench import bench  # noqa: E402
cli.add_command(bench)
cli.add_command(model)


if __name__ == "__main__":
    sys.exit(main())
