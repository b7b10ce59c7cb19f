"""`clgemm explain`: a rung's lesson on the terminal, the diff coloured."""

from __future__ import annotations

import click

from ..course.explain import explain_lines

COLOURS = {"add": "green", "remove": "red"}


@click.command()
@click.argument("rung_number", metavar="RUNG", type=int)
def explain(rung_number: int) -> None:
    """What a rung adds and teaches, its macros, and its kernel's diff against the rung before."""
    for kind, line in explain_lines(rung_number):
        click.echo(click.style(line, fg=COLOURS[kind]) if kind in COLOURS else line)
