"""Rung 6: a WPTM x WPTN block of C per work-item, its A and B values held in registers.

The tile parameters, derived macros and constraints defined here are shared by rungs 7-10 and the
library kernels, which keep this geometry and change only how the tiles are fed; importing them
keeps those kernels from drifting apart on what, say, RTSM means.
"""

from __future__ import annotations

from clgemm.rungs.base import TRANSPOSE_B, Constraint, Param, Params, Rung, divisible

TILE_PARAMS = (
    Param("TSM", (16, 32, 64, 128), 128, "tile rows (along M)"),
    Param("TSN", (16, 32, 64, 128), 128, "tile columns (along N)"),
    Param("TSK", (8, 16, 32), 16, "tile depth (along K)"),
    Param("WPTM", (1, 2, 4, 8, 16), 8, "outputs per work-item along M"),
    Param("WPTN", (1, 2, 4, 8, 16), 8, "outputs per work-item along N"),
)
PAD_PARAM = Param("PAD", (0, 1, 2), 1, "floats of padding per row of the local B tile", minimum=0)


def threads(p: Params) -> int:
    """Work-items per group; 0 when WPTM/WPTN do not divide the tile (checked separately)."""
    return (p["TSM"] // p["WPTM"]) * (p["TSN"] // p["WPTN"])


def splits_evenly(total: int, parts: int) -> bool:
    """Whether `total` loads can be shared out equally; False rather than a ZeroDivisionError,
    because a tuner may evaluate a constraint on a set that already broke an earlier one."""
    return parts > 0 and total % parts == 0


def derive_blocking(p: Params) -> dict[str, int]:
    t = threads(p)
    return {"RTSM": p["TSM"] // p["WPTM"], "RTSN": p["TSN"] // p["WPTN"],
            "LPTA": p["TSK"] * p["TSM"] // t, "LPTB": p["TSK"] * p["TSN"] // t}


BLOCKING_CONSTRAINTS = (
    divisible("TSM % WPTM == 0", "TSM", "WPTM"),
    divisible("TSN % WPTN == 0", "TSN", "WPTN"),
)

SCALAR_LOAD_CONSTRAINTS = (
    Constraint("TSK*TSM % work-items == 0 (whole A-tile loads)", "divisibility",
               lambda p, d: splits_evenly(p["TSK"] * p["TSM"], threads(p))),
    Constraint("TSK*TSN % work-items == 0 (whole B-tile loads)", "divisibility",
               lambda p, d: splits_evenly(p["TSK"] * p["TSN"], threads(p))),
)


def local_size(p: Params) -> tuple[int, int]:
    return (p["TSM"] // p["WPTM"], p["TSN"] // p["WPTN"])


def output_tile(p: Params) -> tuple[int, int]:
    return (p["TSM"], p["TSN"])


def tile_bytes(p: Params) -> int:
    """One A tile plus one padded B tile, in bytes."""
    return 4 * (p["TSK"] * p["TSM"] + p["TSN"] * (p["TSK"] + p["PAD"]))


RUNG = Rung(
    number=6, slug="register-blocking", title="2D register blocking",
    adds="WPTM x WPTN outputs per work-item, values in registers",
    file="06_register_blocking.cl", kernel="gemm_register_blocking",
    params=TILE_PARAMS + (PAD_PARAM,),
    derive=derive_blocking,
    constraints=BLOCKING_CONSTRAINTS + SCALAR_LOAD_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: p["TSK"],
    local_mem_bytes=tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    teaches="register reuse: a 2D block of outputs turns WPTM+WPTN local reads into "
            "WPTM*WPTN multiply-adds",
)
