"""Options that several commands take, each declared here once, so the same flag has the same
name, help and checks wherever it appears; and the small parsers behind them.

A value that can be refused without a device is refused while the command line is parsed, by
the option's own callback, with the one-line `UsageError` message every command used to print
itself: a mistake in the options then never costs a device discovery or a kernel build.
"""

from __future__ import annotations

import functools
import math
import shlex
import sys
from typing import Any, Callable, TypeVar, cast

import click

from clgemm.backends import registry
from clgemm.cli.output import STDOUT, Output
from clgemm.core.errors import UsageError
from clgemm.core.paths import check_writable
from clgemm.core.problem import Problem
from clgemm.devices.hardware import Overrides
from clgemm.measure.ladder import DEFAULT_SIZE
from clgemm.rungs import LIBRARY, LIBRARY_NAMES, get_rung

F = TypeVar("F", bound=Callable[..., Any])

DEVICE_HELP = ("device index (see 'clgemm devices') or a case-insensitive part of its name "
               "(default: $CLGEMM_DEVICE, else the first CPU device)")
BACKEND_HELP = "only this backend's devices (an NVIDIA GPU is listed by both)"
#: the registered backends' names (a live view of the registry's)
BACKENDS = registry.BACKEND_NAMES


class BackendChoice(click.Choice):
    """The registered backends, read when the option is parsed or its help printed rather than
    when this module is imported, so that a backend registered after that is a choice too."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(BACKENDS)

    @choices.setter
    def choices(self, value: Any) -> None:
        """click sets the choices once, from the constructor's; the registry's stand instead."""


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Apply options so that they are listed in `--help` in the order given."""
    def apply(command: F) -> F:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command
    return apply


def command_line() -> str:
    """The command as the user typed it, for the provenance of what a command writes."""
    return "clgemm " + " ".join(shlex.quote(a) for a in sys.argv[1:])


# -- the device ---------------------------------------------------------------------------------
#: every command that opens a device takes exactly these two options
device_options = _stack(
    click.option("--device", "-d", default=None, help=DEVICE_HELP),
    click.option("--backend", "-b", type=BackendChoice(), default=None,
                 help=BACKEND_HELP),
)


# -- numbers that must be positive ----------------------------------------------------------------
def check_positive(name: str, value: float | None, allow_zero: bool = False) -> None:
    """NaN compares false with everything, so it is refused by name rather than let through
    as "not negative"; an infinite limit is no limit, which these options cannot mean."""
    if value is None:
        return
    if not math.isfinite(value):
        raise UsageError(f"{name} {value:g}: must be a finite number")
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(f"{name} {value:g}: must be {'>= 0' if allow_zero else 'positive'}")


def positive(allow_zero: bool = False) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback refusing a count, a time or a timeout that cannot mean anything."""
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        check_positive(param.opts[0], value, allow_zero)
        return value
    return callback


def timing_options(repeats_help: str, warmup_help: str) -> Callable[[F], F]:
    """--repeats and --warmup. What is repeated differs by command (launches, rounds,
    evaluations), so the help does; what counts as a valid number does not."""
    return _stack(
        click.option("--repeats", type=int, default=None, callback=positive(),
                     help=repeats_help),
        click.option("--warmup", type=int, default=None, callback=positive(allow_zero=True),
                     help=warmup_help),
    )


# -- files written at the end --------------------------------------------------------------------
def _writable(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and value != STDOUT:
        check_writable(param.opts[0], value)
    return value


def output_file(flag: str, dest: str, help: str) -> Callable[[F], F]:
    """An option naming a file written once the work is done; a file that could not be written
    is refused before the work starts."""
    return click.option(flag, dest, type=click.Path(dir_okay=False), default=None,
                        callback=_writable, help=help)


def _data_option(flag: str, dest: str, help: str) -> Callable[[F], F]:
    """A file written once the work is done, or stdout: '-', or the option given alone."""
    return click.option(flag, dest, type=click.Path(dir_okay=False, allow_dash=True),
                        is_flag=False, flag_value=STDOUT, default=None, metavar="[FILE|-]",
                        callback=_writable, help=help)


WIDE_HELP = ("print every column and every parameter in full, however wide (default: fitted to "
             "the terminal's width, $COLUMNS or 120 columns)")


def output_options(json: bool = True, csv: bool = False, wide: bool = True) -> Callable[[F], F]:
    """--json [FILE|-] (the results in full), --csv [FILE|-] where the results are a table (one
    row per line of it), --wide where there is a table. '-', or the option with no file, is
    stdout, which then holds the data alone. The command receives them together as one `out`
    argument, an `Output`."""
    names = [n for n, on in (("json_file", json), ("csv_file", csv), ("wide", wide)) if on]
    options = []
    if json:
        options.append(_data_option("--json", "json_file",
                                    "write the results as JSON to FILE; '-' or no FILE: to "
                                    "stdout, which then holds the JSON alone (docs/cli.md)"))
    if csv:
        options.append(_data_option("--csv", "csv_file",
                                    "write the table as CSV, one row per line, to FILE; '-' or "
                                    "no FILE: to stdout, which then holds the CSV alone"))
    if wide:
        options.append(click.option("--wide", is_flag=True, help=WIDE_HELP))

    def apply(command: F) -> F:
        @functools.wraps(command)
        def with_output(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(name) for name in names}
            kwargs["out"] = Output(given.get("json_file"), given.get("csv_file"),
                                   bool(given.get("wide")))
            return command(*args, **kwargs)
        # cast: the wrapper takes the command's place (wraps gave it the command's name and
        # help, and click calls it by keyword), which is all a decorator's F promises
        return _stack(*options)(cast(F, with_output))
    return apply


# -- one rung, by number or name ---------------------------------------------------------------
def rung_number(text: str | int) -> int:
    """A rung's number from what a user writes for one: 1-10 for the ladder, or a library
    kernel's number or its name as --rungs takes it ('direct', 'tiled', 'tiled-any')."""
    if isinstance(text, int):
        return get_rung(text).number
    name = text.strip().lower()
    if name in LIBRARY_NAMES:
        return LIBRARY_NAMES[name]
    try:
        number = int(name)
    except ValueError:
        kernels = ", ".join(f"{n} '{r.slug}'" for n, r in sorted(LIBRARY.items()))
        raise UsageError(f"'{text}' is not a valid integer or kernel name (the ladder is rungs "
                         f"1-10; beside it the kernels {kernels})") from None
    return get_rung(number).number


class RungType(click.ParamType):
    """A click type for one rung: its number or its kernel name, as `rung_number` reads it."""

    name = "rung"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        return rung_number(value)


RUNG = RungType()


# -- the problem size ------------------------------------------------------------------------------
#: what every command with --size must tell: not every rung runs at every size
SIZES_RUN = ("rungs 1-9 need M, N and K to be multiples of their tiles (multiples of 128 suit "
             "every rung's defaults); rung 10 and the tiled-any and direct kernels run any size")


def _size_options(default: str) -> Callable[[F], F]:
    return _stack(
        click.option("--size", "-s", type=int, default=None,
                     help=f"square size M=N=K{default}; {SIZES_RUN}"),
        click.option("--mnk", type=int, nargs=3, default=None, help="three sizes M N K"),
    )


size_options = _size_options("")
#: --size and --mnk where a command runs at the device's default size without them
default_size_options = _size_options(f" (default: {DEFAULT_SIZE['CPU']} on a CPU device, "
                                     f"{DEFAULT_SIZE['GPU']} on a GPU)")


def problem_from_options(size: int | None, mnk: tuple[int, int, int] | None,
                         default: int) -> Problem:
    """--size or --mnk, or the device's default square size when neither is given."""
    if size is not None and mnk:
        raise UsageError("give either --size or --mnk, not both")
    if mnk:
        return Problem(*mnk)
    return Problem(default, default, default) if size is None else Problem(size, size, size)


# -- kernel parameters -----------------------------------------------------------------------------
def param_option(help: str = "[RUNG:]NAME=VALUE, repeatable; RUNG a number or a kernel name"
                 ) -> Callable[[F], F]:
    """--param/-p, repeatable; parse what it collects with `parse_param_options`."""
    return click.option("--param", "-p", "param_opts", multiple=True, help=help)


def parse_param_options(options: tuple[str, ...] | list[str],
                        rungs: list[int]) -> dict[int, dict[str, int]]:
    """Per-rung overrides. Without a 'RUNG:' prefix a setting applies to every selected rung
    that has that macro; a setting no selected rung can take is an error."""
    out: dict[int, dict[str, int]] = {}
    for opt in options:
        text = opt.strip()
        target, _, assign = text.rpartition(":")
        name, eq, value = assign.partition("=")
        name = name.strip().upper()
        if not eq or not name:
            raise UsageError(f"--param '{opt}': write NAME=VALUE or RUNG:NAME=VALUE")
        try:
            number = int(value)
        except ValueError:
            raise UsageError(f"--param '{opt}': value '{value}' is not an integer") from None
        if target:
            try:
                wanted = [rung_number(target)]
            except UsageError as exc:
                raise UsageError(f"--param '{opt}': {exc}") from None
            if wanted[0] not in rungs:
                raise UsageError(f"--param '{opt}': rung {wanted[0]} is not among the selected rungs")
            if name not in get_rung(wanted[0]).param_names():
                raise UsageError(f"--param '{opt}': rung {wanted[0]} has no parameter {name} "
                                 f"(it has {', '.join(get_rung(wanted[0]).param_names())})")
        else:
            wanted = [r for r in rungs if name in get_rung(r).param_names()]
            if not wanted:
                raise UsageError(f"--param '{opt}': no selected rung has a parameter {name}")
        for r in wanted:
            out.setdefault(r, {})[name] = number
    return out


# -- the performance bound's hardware figures -------------------------------------------------------
_BOUND_FIGURES = ("peak_gflops", "local_gbps", "mem_gbps")


def bound_options(command: F) -> F:
    """--peak-gflops, --local-gbps and --mem-gbps, for a device the table does not know (or
    knows wrongly). The command receives them together as one `overrides` argument, the form
    `hardware_for_device` takes; whether each is positive is checked there."""
    @functools.wraps(command)
    def with_overrides(*args: Any, **kwargs: Any) -> Any:
        kwargs["overrides"] = Overrides(**{name: kwargs.pop(name) for name in _BOUND_FIGURES})
        return command(*args, **kwargs)

    # cast: as in output_options, the wrapper takes the command's place
    return _stack(
        click.option("--peak-gflops", type=float, default=None,
                     help="performance bound: the device's FP32 peak in GFLOP/s, instead of "
                          "lanes x compute units x clock x 2 from the table"),
        click.option("--local-gbps", type=float, default=None,
                     help="performance bound: local-memory bandwidth per compute unit, GB/s"),
        click.option("--mem-gbps", type=float, default=None,
                     help="performance bound: DRAM bandwidth of the device, GB/s"),
    )(cast(F, with_overrides))
