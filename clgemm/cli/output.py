"""Where a command's words go. The table goes to stdout, fitted to the terminal's width (or
$COLUMNS, 120 columns where neither says) unless --wide, with failures in bold red when stdout is
a terminal and NO_COLOR is not set. --json and --csv go to a file, or with '-' to stdout, which
then carries that and nothing else: the table is left out (the data holds all it says) and
whatever else the command says goes to stderr. Progress and notes on stderr are wrapped to the
same width, so none runs off the edge of a terminal.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from typing import Any

import click

from clgemm.core.errors import UsageError
from clgemm.core.paths import write_output
from clgemm.core.settings import no_color
from clgemm.core.tables import DEFAULT_WIDTH, MIN_WIDTH, Layout, fit_lines

#: what names stdout as the file of --json or --csv
STDOUT = "-"


def terminal_width() -> int:
    """$COLUMNS, else the terminal's width, else 120; never below the narrowest a table is
    fitted to."""
    return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def to_stderr(text: str) -> None:
    """Lines on stderr wrapped to the terminal's width, a continued line indented under its
    first: a long device name or parameter list would otherwise run past the edge."""
    for line in fit_lines([text], Layout(width=terminal_width())):
        click.echo(line, err=True)


def progress(msg: str) -> None:
    """A progress line on stderr, indented under the command's heading, so that stdout holds
    only the result (a table, or JSON/CSV with `-`)."""
    to_stderr(f"  {msg}")


def _bold_red(text: str) -> str:
    return click.style(text, fg="red", bold=True)


def colour_on() -> bool:
    """Colour where a person reads stdout: a terminal, and NO_COLOR (no-color.org) not set."""
    return sys.stdout.isatty() and not no_color()


def strict(x: Any) -> Any:
    """The data with every non-finite number as null: JSON has no NaN or infinity, and other
    programs' parsers refuse them."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [strict(v) for v in x]
    return x


class Output:
    """A command's results: its table and messages, and its --json and --csv data."""

    def __init__(self, json_file: str | None = None, csv_file: str | None = None,
                 wide: bool = False):
        if json_file == STDOUT and csv_file == STDOUT:
            raise UsageError("--json - and --csv -: only one of them can go to stdout")
        self.json_file = json_file
        self.csv_file = csv_file
        self.wide = wide

    @property
    def data_on_stdout(self) -> bool:
        """Whether stdout carries the JSON or the CSV, and so nothing else."""
        return STDOUT in (self.json_file, self.csv_file)

    @property
    def layout(self) -> Layout:
        return Layout(width=None if self.wide else terminal_width(),
                      mark=_bold_red if colour_on() else Layout().mark)

    def table(self, text: str) -> None:
        """The table (and what belongs with it): stdout, unless the data goes there."""
        if not self.data_on_stdout:
            click.echo(text)

    def say(self, text: str = "") -> None:
        """The command's report as it goes: stdout, or stderr when stdout carries the data."""
        click.echo(text, err=self.data_on_stdout)

    @staticmethod
    def note(text: str) -> None:
        """Progress, warnings and notes: stderr, always, wrapped to the terminal."""
        to_stderr(text)

    def write(self, data: Any = None, csv_text: str | None = None) -> None:
        """The --json data and the --csv text, each where its option said."""
        if self.json_file and data is not None:
            self._put("--json", self.json_file,
                      json.dumps(strict(data), indent=2, allow_nan=False) + "\n")
        if self.csv_file and csv_text is not None:
            self._put("--csv", self.csv_file, csv_text)

    def _put(self, option: str, where: str, text: str) -> None:
        """One output, whole or not at all: a failure (a full disk, a refused write) is one
        `FileWriteError` line naming the option, the file and why, and leaves no part file."""
        if where == STDOUT:
            click.echo(text, nl=False)
        else:
            write_output(where, text, option)
            self.note(f"wrote {where}")
