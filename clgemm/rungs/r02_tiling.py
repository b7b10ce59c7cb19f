"""Rung 2: TS x TS tiles of A and B staged in local memory."""

from clgemm.rungs.base import Param, Rung

RUNG = Rung(
    number=2, slug="tiling", title="local-memory tiling",
    adds="tiles of A and B shared through local memory",
    file="02_tiling.cl", kernel="gemm_tiling",
    params=(Param("TS", (4, 8, 16, 32), 16, "tile side = work-group side"),),
    derive=lambda p: {},
    constraints=(),
    local_size=lambda p: (p["TS"], p["TS"]),
    output_tile=lambda p: (p["TS"], p["TS"]),
    k_step=lambda p: p["TS"],
    local_mem_bytes=lambda p: 2 * p["TS"] * p["TS"] * 4,
    teaches="data reuse: each global value is read once per work-group, not once per work-item",
)
