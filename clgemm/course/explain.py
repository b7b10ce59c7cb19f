"""`clgemm explain N`: a rung's page in brief, in the terminal, with its diff.

The same registry records and kernel files as the pages in `ladder/`, so what a student reads
here and there is the same; the terminal version leaves out the measurements, which belong to
a device, and points to the page for them: the checkout's, or the copy an install holds.
"""

from __future__ import annotations

from dataclasses import replace

from ..paths import course_folder
from ..rungs import REGISTRY, Rung, get_rung
from ..tables import FULL, Column, Layout, render
from . import page_link
from .diffs import diff_stats, kernel_file, previous, rung_diff
from .macros import constraint_rows, geometry, kib, macro_rows


def page_path(rung: Rung) -> str:
    """Where the rung's page is here: the checkout's ladder/ or the copy an install holds, as a
    path that can be opened; where neither exists, its place in the repository."""
    folder = course_folder()
    link = page_link(rung)
    if folder is None:
        return f"ladder/{link} in the clgemm repository (not installed with this copy)"
    return f"{folder / link}"


def explain_lines(number: int, layout: Layout = FULL) -> list[tuple[str, str]]:
    """(kind, line) pairs: kind is 'text', 'add' or 'remove', so the caller may colour the diff.
    The macro table is laid out by `layout` (in full, or fitted to a terminal's width). An
    unknown rung number is a UsageError from the registry."""
    rung = get_rung(number)
    out: list[tuple[str, str]] = []

    def text(line: str = "") -> None:
        out.append(("text", line))

    ladder = rung.number in REGISTRY
    text(f"rung {rung.number}: {rung.title}" if ladder else
         f"kernel {rung.number} ('{rung.slug}', beside the ladder): {rung.title}")
    text(f"  adds:     {rung.adds}")
    text(f"  teaches:  {rung.teaches}")
    text(f"  kernel:   {rung.kernel} in {kernel_file(rung.file)}")
    if rung.helpers:
        text("  before it: " + ", ".join(f"{h.name} ({h.kernel} in {kernel_file(h.file)})"
                                         for h in rung.helpers))
    text(f"  page:     {page_path(rung)} (measurements and what the tuner chose)")
    text()
    rows = [(m.name, m.default, ",".join(map(str, m.candidates)), m.meaning)
            for m in macro_rows(rung)]
    text("macros:")
    indented = layout if layout.wide else replace(layout, width=(layout.width or 0) - 2)
    table = render(["macro", "default", Column("candidates", wrap=10),
                    Column("meaning", wrap=30)], rows, indented)
    for line in table.splitlines():
        text("  " + line)
    g = geometry(rung, rung.defaults())
    if g is not None:
        text()
        text(f"at the defaults: work-group {g.work_group[0]}x{g.work_group[1]} "
             f"({g.work_items} work-items), {g.outputs_per_item} "
             f"output{'' if g.outputs_per_item == 1 else 's'} per work-item, "
             f"{kib(g.local_bytes)} local memory")
        if g.derived:
            text("  derived: " + " ".join(f"{k}={v}" for k, v in g.derived.items()))
    text()
    text("constraints (tuner funnel order):")
    for stage, name in constraint_rows(rung):
        text(f"  {stage}: {name}")
    text()
    diff = rung_diff(rung)
    before = previous(rung)
    if before is None:
        text(f"the whole kernel ({kernel_file(rung.file)}); later rungs show a diff against the "
             f"one before:")
        out += [("text", ln) for ln in diff.splitlines()]
        return out
    added, removed = diff_stats(diff)
    what = "rung" if before.number in REGISTRY else "kernel"
    text(f"diff against {what} {before.number} ({before.title}): +{added} -{removed} lines")
    for ln in diff.splitlines():
        if ln.startswith("+") and not ln.startswith("+++"):
            out.append(("add", ln))
        elif ln.startswith("-") and not ln.startswith("---"):
            out.append(("remove", ln))
        else:
            out.append(("text", ln))
    return out
