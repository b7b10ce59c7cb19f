"""`clgemm report`: regenerate, or with --check only judge, what is generated from results/."""

from __future__ import annotations

import click

from clgemm.core import paths
from clgemm.course.build import StaleError
from clgemm.course.build import report as run_report


@click.command()
@click.option("--check", is_flag=True,
              help="write nothing; exit 1 naming every generated block or plot that is stale")
def report(check: bool) -> None:
    """Regenerate the course's pages (ladder/), results/README.md and the plots from results/."""
    out = run_report(paths.checkout("clgemm report"), write=not check, say=click.echo)
    if check:
        stale = out.stale_blocks + [f"{p}: out of date or missing" for p in out.stale_plots]
        for item in stale:
            click.echo(f"stale: {item}")
        if stale:
            raise StaleError(f"{len(stale)} generated part(s) are stale: run 'clgemm report'")
        click.echo("every generated block and plot is up to date")
    elif not out.written and not out.drawn:
        click.echo("nothing to regenerate: every generated block and plot is up to date")
