"""The course in `ladder/`: one page per rung plus an index, with generated blocks inside.

Pages mix hand-written prose with blocks that `clgemm report` fills from the registry, the
kernels and the committed results. Keeping the numbers generated means a page can never quote a
measurement that the files in `results/` do not hold, and new results need no editing by hand.

- `data.py`    finds and reads the committed results (ladder, bench, databases, journals)
- `diffs.py`   each rung's kernel against the one before
- `macros.py`  a rung's macros, derived macros and constraints, from the registry
- `tables.py`  the markdown of every generated block
- `pages.py`   block markers: fill, compare, name what is stale
- `build.py`   which blocks go in which page, and the report as a whole
- `library.py` the page of the kernels beside the ladder (`beyond.md`)
- `explain.py` `clgemm explain N` in the terminal
"""

from __future__ import annotations

from clgemm.rungs import REGISTRY, Rung

#: the page of the kernels beside the ladder (the direct and tiled kernels)
BEYOND = "beyond.md"


def page_name(rung: Rung) -> str:
    """`05-transposed.md`: the number keeps the pages in ladder order in any file listing. The
    library kernels share one page, `beyond.md`."""
    if rung.number not in REGISTRY:
        return BEYOND
    return f"{rung.number:02d}-{rung.slug}.md"


def page_link(rung: Rung) -> str:
    """The page of a rung; for a library kernel, its section of `beyond.md` (GitHub's anchor of
    its heading, "Kernel 12: tiled")."""
    if rung.number in REGISTRY:
        return page_name(rung)
    return f"{BEYOND}#kernel-{rung.number}-{rung.slug}"
