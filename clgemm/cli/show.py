"""`clgemm show`: a rung's kernel source exactly as it is compiled."""

from __future__ import annotations

import click

from ..paths import KERNELS
from ..rungs import get_rung
from .options import param_option, parse_param_options


@click.command()
@click.argument("rung_number", metavar="RUNG", type=int)
@param_option("NAME=VALUE, repeatable")
def show(rung_number: int, param_opts: tuple[str, ...]) -> None:
    """Print a rung's source as it is compiled: the macros set, then the kernel."""
    rung = get_rung(rung_number)
    params = rung.resolve(parse_param_options(param_opts, [rung_number]).get(rung_number))
    rung.validate(params)
    click.echo(f"// rung {rung.number}: {rung.title} ({rung.file}, kernel {rung.kernel})")
    click.echo("// build options:")
    for k, v in rung.macros(params).items():
        click.echo(f"#define {k} {v}")
    derived = rung.derive(params)
    if derived:  # not passed: the kernel file derives them itself, to these values
        click.echo("// derived by the kernel: "
                   + ", ".join(f"{k} = {v}" for k, v in derived.items()))
    for helper in rung.helpers_for(params):
        opts = " ".join(f"-D{k}={v}" for k, v in helper.macros.items())
        click.echo(f"// helper step before it: {helper.name} ({helper.file}: {helper.kernel}, {opts})")
    click.echo((KERNELS / "common.h").read_text())
    click.echo((KERNELS / rung.file).read_text())
