"""`clgemm explain N`: a rung's page in brief, in the terminal, with its diff.

The same registry records and kernel files as the pages in `ladder/`, so what a student reads
here and there is the same; the terminal version leaves out the measurements, which belong to
a device, and points to the page for them: the checkout's, or the copy an install holds.
"""

from __future__ import annotations

from dataclasses import replace

from clgemm.core.paths import course_folder
from clgemm.core.tables import FULL, Column, Layout, render
from clgemm.course import page_link
from clgemm.course.diffs import diff_stats, kernel_file, previous, rung_diff
from clgemm.course.macros import constraint_rows, geometry, kib, macro_rows
from clgemm.rungs import REGISTRY, Rung, get_rung


def page_path(rung: Rung) -> str:
    """Where the rung's page is here: the checkout's ladder/ or the copy an install holds, as a
    path that can be opened; where neither exists, its place in the repository."""
    folder = course_folder()
    link = page_link(rung)
    if folder is None:
        return f"ladder/{link} in the clgemm repository (not installed with this copy)"
    return f"{folder / link}"


def _about(rung: Rung) -> list[str]:
    """What the rung is, adds and teaches, and where its kernel and page are."""
    lines = [f"rung {rung.number}: {rung.title}" if rung.number in REGISTRY else
             f"kernel {rung.number} ('{rung.slug}', beside the ladder): {rung.title}",
             f"  adds:     {rung.adds}",
             f"  teaches:  {rung.teaches}",
             f"  kernel:   {rung.kernel} in {kernel_file(rung.file)}"]
    if rung.helpers:
        lines.append("  before it: " + ", ".join(f"{h.name} ({h.kernel} in {kernel_file(h.file)})"
                                                 for h in rung.helpers))
    lines.append(f"  page:     {page_path(rung)} (measurements and what the tuner chose)")
    return lines


def _macros(rung: Rung, layout: Layout) -> list[str]:
    """The macro table, indented under its title (fitted: to the width less the indent)."""
    rows = [(m.name, m.default, ",".join(map(str, m.candidates)), m.meaning)
            for m in macro_rows(rung)]
    indented = layout if layout.wide else replace(layout, width=(layout.width or 0) - 2)
    table = render(["macro", "default", Column("candidates", wrap=10),
                    Column("meaning", wrap=30)], rows, indented)
    return ["macros:", *("  " + line for line in table.splitlines())]


def _at_defaults(rung: Rung) -> list[str]:
    """The work-group, outputs and local memory at the defaults ([] where the rung has no
    geometry to show)."""
    g = geometry(rung, rung.defaults())
    if g is None:
        return []
    lines = ["", f"at the defaults: work-group {g.work_group[0]}x{g.work_group[1]} "
                 f"({g.work_items} work-items), {g.outputs_per_item} "
                 f"output{'' if g.outputs_per_item == 1 else 's'} per work-item, "
                 f"{kib(g.local_bytes)} local memory"]
    if g.derived:
        lines.append("  derived: " + " ".join(f"{k}={v}" for k, v in g.derived.items()))
    return lines


def _diff(rung: Rung) -> list[tuple[str, str]]:
    """The first kernel whole; any other as a diff against the one before, its added and
    removed lines marked so that the caller may colour them."""
    diff = rung_diff(rung)
    before = previous(rung)
    if before is None:
        return [("text", f"the whole kernel ({kernel_file(rung.file)}); later rungs show a diff "
                         f"against the one before:"),
                *(("text", ln) for ln in diff.splitlines())]
    added, removed = diff_stats(diff)
    what = "rung" if before.number in REGISTRY else "kernel"
    out = [("text", f"diff against {what} {before.number} ({before.title}): +{added} "
                    f"-{removed} lines")]
    for ln in diff.splitlines():
        if ln.startswith("+") and not ln.startswith("+++"):
            out.append(("add", ln))
        elif ln.startswith("-") and not ln.startswith("---"):
            out.append(("remove", ln))
        else:
            out.append(("text", ln))
    return out


def explain_lines(number: int, layout: Layout = FULL) -> list[tuple[str, str]]:
    """(kind, line) pairs: kind is 'text', 'add' or 'remove', so the caller may colour the diff.
    The macro table is laid out by `layout` (in full, or fitted to a terminal's width). An
    unknown rung number is a UsageError from the registry."""
    rung = get_rung(number)
    text = [*_about(rung), "", *_macros(rung, layout), *_at_defaults(rung), "",
            "constraints (tuner funnel order):",
            *(f"  {stage}: {name}" for stage, name in constraint_rows(rung)), ""]
    return [("text", line) for line in text] + _diff(rung)
