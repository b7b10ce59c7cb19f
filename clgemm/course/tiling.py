"""Who computes and who loads what, per rung: the picture behind each rung's idea.

For one work-group of a small example configuration, the work-item (by linear id, dimension 0
fastest) that computes each element of the C tile, and the one that loads each element of the A
and B tiles into local memory, worked out from the index arithmetic of the rung's kernel. The
course draws them (`plots.draw_tiling`); tests check them against the kernels' own invariants
(every work-item computes as many outputs as the others, and loads as many values).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clgemm.rungs import REGISTRY

#: a small configuration per rung, small enough to draw one cell per element; each passes the
#: rung's own divisibility constraints (tests/unit/test_course.py checks)
EXAMPLES: dict[int, dict[str, int]] = {
    1: {"TS": 4},
    2: {"TS": 4},
    3: {"TS": 4, "WPT": 2},
    4: {"TS": 4, "WIDTH": 2},
    5: {"TSM": 4, "TSN": 8, "TSK": 4, "WPTN": 4, "PAD": 0},
    6: {"TSM": 8, "TSN": 8, "TSK": 4, "WPTM": 2, "WPTN": 2, "PAD": 0},
    7: {"TSM": 8, "TSN": 8, "TSK": 4, "WPTM": 2, "WPTN": 2, "WIDTH": 2, "PAD": 0},
    8: {"TSM": 8, "TSN": 8, "TSK": 4, "WPTM": 2, "WPTN": 2, "WIDTH": 2, "PAD": 0},
    9: {"TSM": 8, "TSN": 8, "TSK": 4, "WPTM": 2, "WPTN": 2, "WIDTH": 2, "PAD": 0},
    10: {"TSM": 8, "TSN": 8, "TSK": 4, "WPTM": 2, "WPTN": 2, "WIDTH": 2, "PAD": 0},
}

#: for rung 10, the example product ends inside the tile: rows and columns past these are outside
#: the matrices (zero-filled on load, never stored)
EDGE = {10: (6, 5, 3)}

#: what each picture adds to the one before, in a line
NOTES = {
    1: "no local memory: work-item 0 reads a whole row of A and column of B from global memory",
    2: "each work-item loads one element of each tile and computes one element of C",
    3: "each work-item computes WPT elements of C, RTS columns apart, and loads as many",
    4: "each work-item computes a vector of WIDTH rows and loads whole vectors",
    5: "rectangular tiles; B is read transposed; loads are spread over all work-items",
    6: "a WPTM x WPTN block of C per work-item, strided so neighbours read neighbouring words",
    7: "as rung 6, loading vectors of WIDTH values (one colour per vector)",
    8: "the same tiling as rung 7; the inputs are read through restrict-qualified pointers",
    9: "the same tiling as rung 8, with two buffers per tile: tile t+1 loads while t computes",
    10: "as rung 9 at a product that ends inside the tile: hatched elements lie outside",
}


@dataclass(frozen=True)
class Tiling:
    """One work-group's tiles: work-item ids per element (-1: nobody, e.g. no local memory)."""

    rung: int
    params: dict[str, int]
    c: np.ndarray          # TSM x TSN: who computes each element of C
    a: np.ndarray          # TSM x TSK: who loads each element of the A tile
    b: np.ndarray          # TSK x TSN: who loads each element of the B tile
    work_items: int
    note: str

    @property
    def edge(self) -> tuple[int, int, int] | None:
        return EDGE.get(self.rung)


def tiling(number: int) -> Tiling:
    """The picture of rung `number` at its example configuration."""
    rung = REGISTRY[number]
    p = rung.resolve(EXAMPLES[number])
    lx, ly = rung.local_size(p)
    tm, tn = rung.output_tile(p)
    tk = p.get("TSK", p.get("TS", 1))
    threads = lx * ly
    c = np.full((tm, tn), -1)
    a = np.full((tm, tk), -1)
    b = np.full((tk, tn), -1)
    ids = np.arange(threads).reshape(ly, lx).T          # ids[lm, ln] = ln * lx + lm
    if number == 4:                                      # a vector of WIDTH rows per work-item
        w = p["WIDTH"]
        for m in range(tm):
            for n in range(tn):
                c[m, n] = ids[m // w, n]
        for m in range(tm):
            for k in range(tk):
                a[m, k] = ids[m // w, k]
        for k in range(tk):
            for n in range(tn):
                b[k, n] = ids[k // w, n]
    else:
        for m in range(tm):
            for n in range(tn):
                c[m, n] = ids[m % lx, n % ly]            # strided by the work-group's sides
        if number == 1:
            a[0, :] = 0                                  # work-item 0: row 0 of A ...
            b[:, 0] = 0                                  # ... and column 0 of B, from global
        elif number in (2, 3):                           # element (m, k) by work-item (m, k % ly)
            for m in range(tm):
                for k in range(tk):
                    a[m, k] = ids[m, k % ly]
            for k in range(tk):
                for n in range(tn):
                    b[k, n] = ids[k, n % ly]
        else:                                            # linear over the tile, vectors first
            w = p.get("WIDTH", 1)
            for m in range(tm):
                for k in range(tk):
                    a[m, k] = (m // w + k * (tm // w)) % threads
            for k in range(tk):
                for n in range(tn):
                    b[k, n] = (n // w + k * (tn // w)) % threads
    return Tiling(number, dict(p), c, a, b, threads, NOTES[number])
