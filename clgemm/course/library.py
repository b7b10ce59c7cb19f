"""The generated blocks of `ladder/beyond.md`: the kernels beside the ladder (the direct kernel and
the two tiled kernels), from the same registry records, kernel files and results as the rung
pages."""

from __future__ import annotations

from clgemm.course import BEYOND
from clgemm.course.diffs import diff_stats, kernel_file, previous, rung_diff
from clgemm.course.tables import link, table
from clgemm.rungs import LIBRARY, Rung

#: the page, relative to the repository
PAGE = f"ladder/{BEYOND}"


def _sizes(rung: Rung) -> str:
    return ("any M, N and K" if rung.any_size else
            "M, N and K multiples of the work-group's tile of C and of the tile depth")


def _helpers(rung: Rung) -> str:
    steps = [f"{h.name} (`{h.kernel}` in `{kernel_file(h.file)}`)" for h in rung.helpers]
    if rung.extra_helpers is not None:
        steps.append("with PANELS=1 also A and BT packed into panels (`pack_panels` in "
                     f"`{kernel_file('helpers.cl')}`)")
    return "; ".join(steps) or "none"


def kernels_block(here: str = "ladder") -> str:
    """One row per library kernel: its number and name, file, what it adds and what it takes."""
    rows = [(n, link(f"ladder/{BEYOND}#kernel-{n}-{r.slug}", here, f"`{r.slug}`"),
             link(kernel_file(r.file), here), r.adds, _sizes(r))
            for n, r in sorted(LIBRARY.items())]
    return table(["kernel", "name (for `--rungs`)", "file", "adds", "sizes"], rows)


def summary_block(rung: Rung, here: str = "ladder") -> str:
    base = previous(rung)
    lines = [f"**Kernel {rung.number} (`{rung.slug}`): {rung.title}.**", "",
             f"- adds: {rung.adds}",
             f"- teaches: {rung.teaches}",
             f"- kernel: `{rung.kernel}` in {link(kernel_file(rung.file), here)}",
             f"- sizes it accepts: {_sizes(rung)}",
             f"- helper kernels before it: {_helpers(rung)}",
             f"- select it: `--rungs {rung.slug}` (or `{rung.number}`) for `clgemm ladder`, "
             f"`tune`, `bench` and `verify`",
             f"- see it compiled: `clgemm show {rung.number}`; in the terminal: "
             f"`clgemm explain {rung.number}`"
             + (f" (its diff against {'rung' if base.number < 11 else 'kernel'} "
                f"{base.number})" if base is not None else "")]
    return "\n".join(lines)


def diff_block(rung: Rung) -> str:
    """The kernel as a change to the one it builds on, folded away (it is long)."""
    base = previous(rung)
    if base is None:
        whole = kernel_file(rung.file)
        return f"The whole kernel is {link(whole, 'ladder', whole)}."
    text = rung_diff(rung)
    added, removed = diff_stats(text)
    return (f"<details><summary><code>{kernel_file(base.file)}</code> → "
            f"<code>{kernel_file(rung.file)}"
            f"</code>: {added} lines added, {removed} removed</summary>\n\n"
            f"```diff\n{text}```\n\n</details>")
