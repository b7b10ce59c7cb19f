"""Library kernel 13, "tiled-any" (clgemm/kernels/tiled_any.cl): the tiled kernel for any M, N,
K >= 1, by bounds-checked (zero-filling) tile loads and guarded stores. It is what gemm() falls
back to when nothing stored fits a shape.

The tiled kernel's pipelines and parameters are kept, without PANELS, LOCKSTEP and the orders of
work-items and tiles; only the edges change. Nothing is padded on the host or by a helper kernel, so the helper time reported for it
is the transpose of B alone.
"""

from __future__ import annotations

from clgemm.rungs.base import TRANSPOSE_B, Rung
from clgemm.rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, TILE_PARAMS, local_size,
                                                output_tile)
from clgemm.rungs.r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM
from clgemm.rungs.tiled import (PIPELINE_CONSTRAINTS, PIPELINE_PARAM, VECTOR_CONSTRAINTS,
                                VECTOR_PARAMS, derive_vectors, pipeline_tile_bytes)

TILED_ANY = Rung(
    number=13, slug="tiled-any", title="tiled kernel for any size",
    adds="the tiled kernel, bounds-checked: any M, N, K",
    file="tiled_any.cl", kernel="gemm_tiled_any",
    params=TILE_PARAMS + (WIDTH_PARAM,) + VECTOR_PARAMS + (PIPELINE_PARAM,),
    derive=derive_vectors,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS + VECTOR_CONSTRAINTS
    + PIPELINE_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: 1,
    local_mem_bytes=pipeline_tile_bytes,
    transposed_b=True,
    any_size=True,
    helpers=(TRANSPOSE_B,),
    teaches="edges without padding: zero-filled loads and guarded stores (vector loads only "
            "where M or N is a multiple of WIDTH); helper time is the transpose only",
)
