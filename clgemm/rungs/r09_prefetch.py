"""Rung 9: rung 8 with prefetching. Two local buffers per operand; the next tiles' global loads are
issued into registers before the compute on the current ones and stored into the other buffer
after it, with one barrier per tile.

Everything else is rung 8's: the tile layout (A tile [k][m], padded B tile [n][k]), the
parameters, the constraints, the opt-in shuffle and the transpose of B. The price is twice the
local memory, which is what the local-memory device constraint now sees.
"""

from __future__ import annotations

from clgemm.rungs.base import TRANSPOSE_B, Params, Rung
from clgemm.rungs.r06_register_blocking import local_size, output_tile, tile_bytes
from clgemm.rungs.r08_vendor_loads import RUNG as RUNG_8


def double_tile_bytes(p: Params) -> int:
    """Two A tiles and two padded B tiles, in bytes."""
    return 2 * tile_bytes(p)


RUNG = Rung(
    number=9, slug="prefetch", title="prefetching, double-buffered tiles",
    adds="next tiles fetched during compute; two buffers per tile",
    file="09_prefetch.cl", kernel="gemm_prefetch",
    params=RUNG_8.params,
    derive=RUNG_8.derive,
    constraints=RUNG_8.constraints,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: p["TSK"],
    local_mem_bytes=double_tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    teaches="latency hiding inside a work-group: overlap the next tile's global loads with this "
            "tile's arithmetic, one barrier per tile instead of two",
)
