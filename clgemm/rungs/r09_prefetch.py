"""Rung 9: double-buffered local tiles; the next tiles are fetched while the current ones are used.

The price is twice the local memory of rung 7, which is what the local-memory device constraint
now sees. The tile parameters and load constraints are rung 7's; the register-vector widths and
the local-memory switches (`VECTOR_PARAMS`) are this rung's own and are shared with rung 10.
PANELS, for the form without local memory, adds two helper steps that pack A and BT into panels
of TSM and TSN rows, contiguous over k; LOCKSTEP keeps a barrier per tile in that form, which on a
CPU runtime makes the group's work-items share each tile's values in cache.
"""

from __future__ import annotations

from . import TRANSPOSE_B, Constraint, Helper, Param, Params, Rung, divisible, panel_helpers
from .r06_register_blocking import BLOCKING_CONSTRAINTS, TILE_PARAMS, local_size, output_tile
from .r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM, derive_wide

VECTOR_PARAMS = (
    Param("VWM", (1, 2, 4, 8, 16), 1, "floats per register vector along M (A values, sums)"),
    Param("VWN", (1, 2, 4, 8), 1, "floats per register vector along N (B values)"),
    Param("CACHE_A", (0, 1), 1, "1: A tiles through local memory; 0: A read from global",
          minimum=0),
    Param("CACHE_B", (0, 1), 1, "1: B tiles through local memory; 0: B read from global",
          minimum=0),
)

VECTOR_CONSTRAINTS = (
    Constraint("VWM is 1, 2, 4, 8 or 16", "divisibility", lambda p, d: p["VWM"] in (1, 2, 4, 8, 16)),
    Constraint("VWN is 1, 2, 4 or 8", "divisibility", lambda p, d: p["VWN"] in (1, 2, 4, 8)),
    divisible("WPTM % VWM == 0", "WPTM", "VWM"),
    divisible("WPTN % VWN == 0", "WPTN", "VWN"),
    Constraint("CACHE_A and CACHE_B are 0 or 1", "divisibility",
               lambda p, d: p["CACHE_A"] in (0, 1) and p["CACHE_B"] in (0, 1)),
    # A GPU's global memory is far from its arithmetic: reading the operands from it in the
    # inner loop re-reads each value once per work-group row or column instead of once per tile.
    Constraint("CACHE_A = CACHE_B = 1 on GPUs", "heuristic",
               lambda p, d: d.device_type != "GPU" or (p["CACHE_A"] and p["CACHE_B"])),
)


PANELS_PARAM = Param("PANELS", (0, 1), 0, "1: A and BT read from panels packed before the "
                     "kernel (with CACHE_A = CACHE_B = 0)", minimum=0)

LOCKSTEP_PARAM = Param("LOCKSTEP", (0, 1), 0, "1: a barrier after every tile, so a CPU runs "
                       "the work-items of a group through K together (with CACHE_A = CACHE_B = 0)",
                       minimum=0)

PANEL_CONSTRAINTS = (
    Constraint("PANELS is 0 or 1", "divisibility", lambda p, d: p["PANELS"] in (0, 1)),
    Constraint("PANELS=0 or CACHE_A = CACHE_B = 0 (panels are read straight from global)",
               "divisibility",
               lambda p, d: not p["PANELS"] or (p["CACHE_A"] == 0 and p["CACHE_B"] == 0)),
    Constraint("LOCKSTEP is 0 or 1", "divisibility", lambda p, d: p["LOCKSTEP"] in (0, 1)),
    Constraint("LOCKSTEP=0 or CACHE_A = CACHE_B = 0 (with local memory the barrier is there)",
               "divisibility",
               lambda p, d: not p["LOCKSTEP"] or (p["CACHE_A"] == 0 and p["CACHE_B"] == 0)),
)


def helpers_with_panels(p: Params) -> tuple[Helper, ...]:
    return panel_helpers(p["TSM"], p["TSN"]) if p["PANELS"] else ()


def derive_vectors(p: Params) -> dict[str, int]:
    return {**derive_wide(p), "VPTM": p["WPTM"] // p["VWM"], "VPTN": p["WPTN"] // p["VWN"]}


def double_tile_bytes(p: Params) -> int:
    """Two A tiles and two B tiles, of those operands that go through local memory."""
    per_buffer = p["TSK"] * (p["TSM"] * p["CACHE_A"] + p["TSN"] * p["CACHE_B"])
    return 2 * 4 * per_buffer


RUNG = Rung(
    number=9, slug="prefetch", title="prefetching, double-buffered tiles",
    adds="next tiles fetched during compute; vector registers",
    file="09_prefetch.cl", kernel="gemm_prefetch",
    params=TILE_PARAMS + (WIDTH_PARAM,) + VECTOR_PARAMS + (PANELS_PARAM, LOCKSTEP_PARAM),
    derive=derive_vectors,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS + VECTOR_CONSTRAINTS
    + PANEL_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: p["TSK"],
    local_mem_bytes=double_tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    extra_helpers=helpers_with_panels,
    teaches="latency hiding inside a work-group: overlap the next tile's loads with this "
            "tile's arithmetic, one barrier per tile; wide register vectors cut the local reads",
)
