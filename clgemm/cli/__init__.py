"""The `clgemm` command line: parse, call the library, print. Nothing else lives here.

One module per command; the options several commands share are declared once in `options`.
Nothing outside this package imports it, so the library never depends on click.
"""

from __future__ import annotations

import click

from clgemm.cli.bench import bench
from clgemm.cli.devices import devices
from clgemm.cli.explain import explain
from clgemm.cli.ladder import ladder
from clgemm.cli.merge import merge
from clgemm.cli.model import model
from clgemm.cli.report import report
from clgemm.cli.show import show
from clgemm.cli.tune import tune
from clgemm.cli.verify import verify
from clgemm.core.errors import ClgemmError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="clgemm")
def cli() -> None:
    """A portable OpenCL SGEMM kernel ladder, tuner and benchmark."""


for _command in (devices, ladder, show, explain, report, tune, merge, verify, bench, model):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> int:
    """Entry point: every user mistake becomes one 'error:' line and exit status 2, a failure at
    run time one line and status 1, Ctrl-C one 'interrupted' line and 130; never a traceback
    for something the user can fix."""
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

