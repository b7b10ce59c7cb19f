"""Rung 9: double-buffered local tiles; the next tiles are fetched while the current ones are used.

The price is twice the local memory of rung 7, which is what the local-memory device constraint
now sees; the parameters and the other constraints are rung 7's.
"""

from __future__ import annotations

from . import TRANSPOSE_B, Params, Rung
from .r06_register_blocking import (BLOCKING_CONSTRAINTS, PAD_PARAM, TILE_PARAMS, local_size,
                                    output_tile, tile_bytes)
from .r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM, derive_wide


def double_tile_bytes(p: Params) -> int:
    """Two A tiles and two padded B tiles."""
    return 2 * tile_bytes(p)


RUNG = Rung(
    number=9, slug="prefetch", title="prefetching, double-buffered tiles",
    adds="next tiles fetched during compute; 2 local buffers",
    file="09_prefetch.cl", kernel="gemm_prefetch",
    params=TILE_PARAMS + (WIDTH_PARAM, PAD_PARAM),
    derive=derive_wide,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: p["TSK"],
    local_mem_bytes=double_tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    teaches="latency hiding inside a work-group: overlap the next tile's loads with this "
            "tile's arithmetic, one barrier per tile",
)
