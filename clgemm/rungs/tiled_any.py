"""Library kernel 13, "tiled-any" (clgemm/kernels/tiled_any.cl): the tiled kernel for any M, N,
K >= 1, by bounds-checked (zero-filling) tile loads and guarded stores. It is what gemm() falls
back to when nothing stored fits a shape.

The tiled kernel's pipelines and parameters are kept, without PANELS, LOCKSTEP and the order of
work-items (WARP_M); only the edges change. Like the tiled kernel it splits K where its tiles of
C are too few to fill the device, the last slice taking what is left of K. Nothing is padded to
its tiles, so the helper time reported for it is the transpose of B alone. Where M or N is off
its vector width, gemm() may pack A and BT with their columns whole vectors apart (the call's
PADDED_LD, where `clgemm.configs.splits.padding_pays`), so that it reads vectors rather than
single floats. On the width the operands lie so already and the kernel is built with PADDED_LD
there too, in gemm() and in the tuner (`whole_vectors`), so that the compiler drops the
float-by-float path; off it the tuner measures the kernel on the operands as they come.
"""

from __future__ import annotations

from clgemm.rungs.base import TRANSPOSE_B, Constraint, Params, Rung
from clgemm.rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, TILE_PARAMS, local_size,
                                                output_tile)
from clgemm.rungs.r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM
from clgemm.rungs.tiled import (ORDER_PARAMS, PIPELINE_CONSTRAINTS, PIPELINE_PARAM,
                                UNROLL_CONSTRAINTS, UNROLL_PARAM, VECTOR_CONSTRAINTS,
                                VECTOR_PARAMS, derive_vectors, pipeline_tile_bytes)

#: the tiled kernel's order of tiles (RASTER), without its order of work-items (WARP_M)
RASTER_PARAM = next(p for p in ORDER_PARAMS if p.name == "RASTER")

#: (on CPUs too: the groups the cores run at one time share the last-level cache, as for the
#: tiled kernel)
RASTER_CONSTRAINTS = (
    Constraint("RASTER >= 0", "divisibility", lambda p, d: p["RASTER"] >= 0),
)


def padded_rows(params: Params, rows: int) -> int:
    """How far apart PADDED_LD lays the columns of an operand of `rows` rows: its rows rounded
    up to the configuration's WIDTH (the kernel derives the same from M and N)."""
    width = TILED_ANY.resolve(dict(params))["WIDTH"]
    return -(-rows // width) * width


def whole_vectors(params: Params, m: int, n: int) -> bool:
    """Whether tight A (M x K) and BT (N x K) already lie with their columns whole vectors of
    the configuration's WIDTH apart, as PADDED_LD has them: then the kernel built with it reads
    them as they are, and the compiler drops its float-by-float path."""
    return padded_rows(params, m) == m and padded_rows(params, n) == n


def tiled_any_slice_args(m: int, n: int, k: int, depth: int, a: object, bt: object,
                         out: object) -> list:
    """The batched form's arguments for C := A B on tight column-major A (M x K) and BT
    (N x K) with K in slices of `depth` (the last one what is left): slice z is the next
    `depth` columns of each, its partial product the next M x N floats of `out`."""
    return [m, n, k, a, bt, out, depth]


#: 32 x 32 x 16 tiles of 4 x 4 sums in vectors of 4, with the next tiles through registers;
#: through a cp.async pipeline (where the device has one); in bands of tiles with the depth
#: unrolled; straight from global memory, float by float
_SMALL_TILES = {"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4, "VWM": 4,
                "VWN": 4}
FORMS = {"registers": _SMALL_TILES,
         "pipeline": {**_SMALL_TILES, "PIPELINE": 2},
         "bands-unrolled": {**_SMALL_TILES, "RASTER": 8, "UNROLL_K": 1},
         "global": {**_SMALL_TILES, "CACHE_A": 0, "CACHE_B": 0, "VWM": 1, "VWN": 1}}

TILED_ANY = Rung(
    number=13, slug="tiled-any", title="tiled kernel for any size",
    adds="the tiled kernel, bounds-checked: any M, N, K",
    file="tiled_any.cl", kernel="gemm_tiled_any",
    params=TILE_PARAMS + (WIDTH_PARAM,) + VECTOR_PARAMS + (PIPELINE_PARAM, RASTER_PARAM,
                                                          UNROLL_PARAM),
    derive=derive_vectors,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS + VECTOR_CONSTRAINTS
    + PIPELINE_CONSTRAINTS + RASTER_CONSTRAINTS + UNROLL_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: 1,
    local_mem_bytes=pipeline_tile_bytes,
    transposed_b=True,
    any_size=True,
    helpers=(TRANSPOSE_B,),
    # the slices are gemm()'s (`clgemm.configs.splits.any_size_slices`), whole tiles deep
    slice_args=tiled_any_slice_args,
    slice_step=lambda p: p["TSK"],
    teaches="edges without padding: zero-filled loads and guarded stores (vector loads only "
            "where M or N is a multiple of WIDTH); helper time is the transpose only",
    forms=FORMS,
)
