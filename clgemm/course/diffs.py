"""Each rung's kernel against the one before, as a unified diff read from `clgemm/kernels/`.

The diff is made from the files every time rather than kept in the pages, so a page always shows
the kernels as they are: a change to a kernel shows up as a stale block, not as a page that
silently teaches old code.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from clgemm.core.paths import KERNELS, KERNELS_REL
from clgemm.rungs import REGISTRY, TILED, TILED_ANY, Rung, get_rung

#: what each library kernel is shown as a change to: the tiled kernel to rung 9, whose pipeline it
#: keeps, the any-size one to the tiled kernel; the direct kernel (None) is shown whole
LIBRARY_BASE: dict[int, int | None] = {TILED.number: 9, TILED_ANY.number: TILED.number}


def kernel_file(name: str) -> str:
    """A kernel file as the pages and the terminal name it: its path in the repository, which is
    also where it sits in an installed package."""
    return f"{KERNELS_REL}/{name}"


def kernel_text(rung: Rung, kernels: Path = KERNELS) -> str:
    return (Path(kernels) / rung.file).read_text()


def previous(rung: Rung) -> Rung | None:
    """The rung before this one in the ladder (None for the first); for a library kernel, the
    kernel it is shown as a change to (`LIBRARY_BASE`)."""
    if rung.number not in REGISTRY:
        base = LIBRARY_BASE.get(rung.number)
        return get_rung(base) if base is not None else None
    earlier = [n for n in REGISTRY if n < rung.number]
    return get_rung(max(earlier)) if earlier else None


def rung_diff(rung: Rung, kernels: Path = KERNELS) -> str:
    """Unified diff of the previous rung's kernel file to this one's (3 lines of context);
    for the first rung, its whole kernel."""
    before = previous(rung)
    if before is None:
        return kernel_text(rung, kernels)
    old = kernel_text(before, kernels).splitlines()
    new = kernel_text(rung, kernels).splitlines()
    lines = difflib.unified_diff(old, new, fromfile=kernel_file(before.file),
                                 tofile=kernel_file(rung.file), lineterm="")
    return "\n".join(lines) + "\n"


def diff_stats(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) of a unified diff."""
    added = sum(1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---"))
    return added, removed
