"""Rung 7: rung 6 with WIDTH-wide vector loads from global memory into the local tiles.

The vector constraints and derived macros here are reused by rungs 8-10 and the tiled kernels, which
keep the loads.
"""

from __future__ import annotations

from clgemm.rungs.base import TRANSPOSE_B, Constraint, Param, Params, Rung, divisible
from clgemm.rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, PAD_PARAM, TILE_PARAMS,
                                                derive_blocking, local_size, output_tile,
                                                splits_evenly, threads, tile_bytes)

WIDTH_PARAM = Param("WIDTH", (1, 2, 4, 8), 4, "floats per vector load from global memory")


def derive_wide(p: Params) -> dict[str, int]:
    """Load counts are in vectors here, so LPTA/LPTB shrink by WIDTH against rung 6."""
    t = threads(p)
    w = p["WIDTH"]
    return {**derive_blocking(p), "VTSM": p["TSM"] // w, "VTSN": p["TSN"] // w,
            "LPTA": p["TSK"] * p["TSM"] // (w * t), "LPTB": p["TSK"] * p["TSN"] // (w * t)}


WIDE_LOAD_CONSTRAINTS = (
    Constraint("WIDTH is 1, 2, 4 or 8", "divisibility", lambda p, d: p["WIDTH"] in (1, 2, 4, 8)),
    divisible("TSM % WIDTH == 0", "TSM", "WIDTH"),
    divisible("TSN % WIDTH == 0", "TSN", "WIDTH"),
    Constraint("TSK*TSM/WIDTH % work-items == 0 (whole vector A-tile loads)", "divisibility",
               lambda p, d: splits_evenly(p["TSK"] * p["TSM"] // p["WIDTH"], threads(p))),
    Constraint("TSK*TSN/WIDTH % work-items == 0 (whole vector B-tile loads)", "divisibility",
               lambda p, d: splits_evenly(p["TSK"] * p["TSN"] // p["WIDTH"], threads(p))),
)

RUNG = Rung(
    number=7, slug="wide-loads", title="wide global loads",
    adds="floatWIDTH vector loads from global into local tiles",
    file="07_wide_loads.cl", kernel="gemm_wide_loads",
    params=TILE_PARAMS + (WIDTH_PARAM, PAD_PARAM),
    derive=derive_wide,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: p["TSK"],
    local_mem_bytes=tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    teaches="memory instruction count: the same bytes moved by WIDTH times fewer loads",
)
