"""Rung 10: any M, N, K >= 1, by bounds-checked (zero-filling) tile loads and guarded stores.

Rung 9's pipeline and parameters are kept; only the edges change. Nothing is padded on the host
or by a helper kernel, so the helper time reported for this rung is the transpose of B alone.
"""

from __future__ import annotations

from . import TRANSPOSE_B, Rung
from .r06_register_blocking import BLOCKING_CONSTRAINTS, TILE_PARAMS, local_size, output_tile
from .r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM
from .r09_prefetch import VECTOR_CONSTRAINTS, VECTOR_PARAMS, derive_vectors, double_tile_bytes

RUNG = Rung(
    number=10, slug="any-size", title="any size, bounds-checked",
    adds="any M, N, K: bounds-checked loads and stores",
    file="10_any_size.cl", kernel="gemm_any_size",
    params=TILE_PARAMS + (WIDTH_PARAM,) + VECTOR_PARAMS,
    derive=derive_vectors,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS + VECTOR_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: 1,
    local_mem_bytes=double_tile_bytes,
    transposed_b=True,
    any_size=True,
    helpers=(TRANSPOSE_B,),
    teaches="edges without padding: zero-filled loads and guarded stores (vector loads only "
            "where M or N is a multiple of WIDTH); helper time is the transpose only",
)
