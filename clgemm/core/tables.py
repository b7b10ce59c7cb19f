"""Tables for the terminal, in full or fitted to a width.

In full (`--wide`) a table shows every column and every parameter however wide it comes out,
as tabulate lays it out. Fitted, it keeps to a width (a terminal's, 120 columns by default):
prose and parameter columns are wrapped onto more lines, the least needed columns are left out
until the rest fits, and prose lines around the table are wrapped. A cell that says something
went wrong (`Bad`) can be marked, bold red on a terminal, without the table knowing where it is
printed: the command passes the marking in the `Layout`.

The tables of the library and the tools take a `Layout`; its default is the full table, so what
they write into files and pages does not depend on any terminal.
"""

from __future__ import annotations

import csv
import io
import re
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from tabulate import tabulate

#: the width a fitted table keeps to where nothing (a terminal, COLUMNS) says otherwise
DEFAULT_WIDTH = 120
#: the narrowest width a table is fitted to: narrower, wrapped columns could no longer be read
MIN_WIDTH = 60

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def visible_len(text: str) -> int:
    """The width of a line on a terminal: escape sequences (colours) take no room."""
    return len(_ANSI.sub("", text))


class Table(str):
    """A rendered table: laid out already, so `fit_lines` passes it through as it is. `shown`
    holds the full headers of the columns it kept, so the lines under a fitted table explain
    only columns that are there."""

    shown: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str, shown: Sequence[str]) -> "Table":
        table = cls(text)
        table.shown = tuple(shown)
        return table


class Bad(str):
    """A cell that says something went wrong (a wrong result, a failed build, a timeout): marked
    where the layout marks failures, plain text everywhere else."""


def _plain(text: str) -> str:
    return text


@dataclass(frozen=True)
class Layout:
    """How a table is printed. `width` None: every column in full, however wide; a number: the
    table fitted to that width. `mark` dresses the text of a `Bad` cell."""

    width: int | None = None
    mark: Callable[[str], str] = _plain

    @property
    def wide(self) -> bool:
        return self.width is None


#: every column in full, nothing marked: what goes into files and pages
FULL = Layout()


@dataclass(frozen=True)
class Column:
    """A column of a table. Fitted, `wrap` is the narrowest its text may be wrapped to (0: never
    wrapped) and `drop` the order in which it is left out while the table is still too wide,
    lowest first (0: always kept); a fitted table also leaves out a column whose cells are all
    empty."""

    header: str
    wrap: int = 0
    drop: int = 0
    #: the header of the fitted table, where the full one is longer than its values need
    short: str = ""
    #: numbers that line up on their last digit
    right: bool = False


def failed(status: str) -> bool:
    """Whether a status says that something went wrong (not merely that it was not run)."""
    text = status.lower()
    return any(word in text for word in ("wrong", "fail", "timeout", "error", "crash"))


def status_cell(status: str) -> str:
    """A status, as a `Bad` cell where it says something went wrong."""
    return Bad(status) if failed(status) else status


def params_text(params: Mapping[str, Any]) -> str:
    """Every parameter, NAME=VALUE in order."""
    return " ".join(f"{k}={v}" for k, v in params.items())


def params_brief(params: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """Only the parameters that differ from the kernel's defaults ('defaults' when none does):
    what sets a configuration apart, in a fraction of the width."""
    return " ".join(f"{k}={v}" for k, v in params.items() if defaults.get(k) != v) or "defaults"


#: the line under a fitted table whose parameter column is `params_brief`
BRIEF_NOTE = "parameters: only those that differ from the kernel's defaults (--wide: all)"


def _cell(x: Any) -> str:
    return "" if x is None else x if isinstance(x, str) else str(x)


def _wrap(text: str, cap: int) -> str:
    """The text in lines of at most `cap` columns: broken between words where it can be, then
    after hyphens, and only a word longer than `cap` with neither is cut (a device name such as
    pthread-skylake-avx512-Intel(R) is one word to textwrap)."""
    lines: list[str] = []
    for part in text.split("\n"):
        for hyphens, cut in ((False, False), (True, False), (True, True)):
            wrapped = textwrap.wrap(part, cap, break_long_words=cut, break_on_hyphens=hyphens)
            if all(len(w) <= cap for w in wrapped):
                break
        lines += wrapped or [""]
    out = "\n".join(lines)
    return Bad(out) if isinstance(text, Bad) else out


def _width(text: str) -> int:
    return max((visible_len(line) for line in text.split("\n")), default=0)


def _marked(cell: str, layout: Layout) -> str:
    if not isinstance(cell, Bad):
        return cell
    return "\n".join(layout.mark(line) if line else line for line in cell.split("\n"))


def _grid(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool],
          layout: Layout) -> str:
    """tabulate's "simple" layout, without the two spaces it adds to every header: cells
    left-aligned (or right), two spaces between columns, a cell of several lines spread over
    several lines."""
    widths = [max([len(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(" " * (w - visible_len(c)) + c if r else c + " " * (w - visible_len(c))
                         for c, w, r in zip(cells, widths, right)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    for row in rows:
        parts = [_marked(c, layout).split("\n") for c in row]
        for j in range(max(len(p) for p in parts)):
            out.append(line([p[j] if j < len(p) else "" for p in parts]))
    return "\n".join(out)


def _total(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> int:
    widths = [max([len(h)] + [_width(r[i]) for r in rows]) for i, h in enumerate(headers)]
    return sum(widths) + 2 * (len(widths) - 1)


def render(columns: Sequence[Column | str], rows: Iterable[Sequence[Any]],
           layout: Layout = FULL) -> Table:
    """A table: tabulate's in full, or fitted to `layout.width` (wrap, then leave out columns
    by their `drop` order; a table that cannot fit comes out as narrow as it can)."""
    cols = [c if isinstance(c, Column) else Column(c) for c in columns]
    body = [[_cell(x) for x in row] for row in rows]
    if layout.wide:
        return Table.of(tabulate([[_marked(c, layout) for c in row] for row in body],
                                 headers=[c.header for c in cols], disable_numparse=True,
                                 colalign=["right" if c.right else "left" for c in cols]),
                        [c.header for c in cols])
    keep = [i for i in range(len(cols)) if not body or any(r[i].strip() for r in body)]
    while True:
        headers = [cols[i].short or cols[i].header for i in keep]
        fitted = _fit([[r[i] for i in keep] for r in body], headers, [cols[i] for i in keep],
                      layout.width or DEFAULT_WIDTH)
        droppable = [i for i in keep if cols[i].drop]
        if _total(headers, fitted) <= (layout.width or DEFAULT_WIDTH) or not droppable:
            return Table.of(_grid(headers, fitted, [cols[i].right for i in keep], layout),
                            [cols[i].header for i in keep])
        keep.remove(min(droppable, key=lambda i: cols[i].drop))


def _fit(rows: list[list[str]], headers: list[str], cols: list[Column],
         width: int) -> list[list[str]]:
    """The rows with their wrappable columns wrapped, the widest first, until the table fits or
    every wrappable column is at its narrowest."""
    caps = {i: max([len(headers[i])] + [_width(r[i]) for r in rows])
            for i, c in enumerate(cols) if c.wrap}
    out = rows
    while _total(headers, out) > width:
        shrinkable = [i for i in caps if caps[i] > max(cols[i].wrap, len(headers[i]))]
        if not shrinkable:
            break
        i = max(shrinkable, key=lambda j: caps[j])
        caps[i] -= 1
        out = [[_wrap(c, caps[j]) if j in caps else c for j, c in enumerate(r)] for r in rows]
    return out


def fit_lines(lines: Iterable[str], layout: Layout = FULL) -> list[str]:
    """Prose lines around a table, each wrapped to the layout's width where it is fitted; a
    continued line is indented two more spaces than its first. A `Table` among them is passed
    through as it is."""
    out: list[str] = []
    for text in lines:
        if isinstance(text, Table):
            out += text.split("\n")
            continue
        for line in str(text).split("\n"):
            if layout.wide or visible_len(line) <= (layout.width or DEFAULT_WIDTH):
                out.append(line)
                continue
            indent = line[:len(line) - len(line.lstrip())]
            out += textwrap.wrap(line.strip(), layout.width or DEFAULT_WIDTH,
                                 initial_indent=indent, subsequent_indent=indent + "  ",
                                 break_long_words=False, break_on_hyphens=False)
    return out


#: a row whose repeats spread wider than this, (max - min) / median, is called out under the
#: table: its median may be off by as much, so the comparisons drawn from it are not to be
#: trusted (pyperf warns the same way, on the standard deviation)
NOISY_SPREAD = 0.2
#: the line under a table with a spread column
SPREAD_NOTE = "spread: (slowest - fastest) / median of the timed repeats"


def spread(times: Sequence[float] | None) -> float | None:
    """(max - min) / median of a row's timed repeats; None with fewer than two, or no median."""
    values = sorted(t for t in (times or ()) if t is not None)
    if len(values) < 2:
        return None
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return (values[-1] - values[0]) / median if median > 0 else None


def spread_cell(times: Sequence[float] | None) -> str:
    """A row's spread as a percentage, marked `Bad` where it is too wide to trust."""
    s = spread(times)
    if s is None:
        return ""
    text = f"{100 * s:.0f}%"
    return Bad(text) if s > NOISY_SPREAD else text


def noisy_warning(rows: Sequence[tuple[str, Sequence[float] | None]]) -> list[str]:
    """One warning line naming every row (label, its timed repeats) whose spread is too wide,
    or none."""
    wide = [(label, s) for label, times in rows
            if (s := spread(times)) is not None and s > NOISY_SPREAD]
    if not wide:
        return []
    named = ", ".join(f"{label} ({100 * s:.0f}%)" for label, s in wide)
    return [f"warning: the repeats of {named} spread by more than {100 * NOISY_SPREAD:.0f}% "
            f"of their median: those times may be off by as much; run again on a quieter "
            f"machine or with more --repeats"]


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """Flat rows as CSV, the first row's keys the header; None as an empty field."""
    if not rows:
        return ""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in rows)
    return buf.getvalue()
