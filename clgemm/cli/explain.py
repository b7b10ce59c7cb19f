"""`clgemm explain`: a rung's lesson on the terminal, the diff coloured."""

from __future__ import annotations

import click

from clgemm.cli.options import RUNG, output_options
from clgemm.cli.output import Output, colour_on
from clgemm.core.tables import fit_lines
from clgemm.course.explain import explain_lines

COLOURS = {"add": "green", "remove": "red"}


@click.command()
@click.argument("rung_number", metavar="RUNG", type=RUNG)
@output_options(json=False)
def explain(rung_number: int, out: Output) -> None:
    """What a rung adds and teaches, its macros, and its kernel's diff against the rung before.
    RUNG: 1-10, or a library kernel by number or name (direct, tiled, tiled-any,
    skinny)."""
    layout = out.layout
    for kind, line in explain_lines(rung_number, layout):
        if kind in COLOURS:  # a line of the diff: code, printed as it is
            click.echo(click.style(line, fg=COLOURS[kind]) if colour_on() else line)
        else:
            for part in fit_lines([line], layout):
                click.echo(part)
