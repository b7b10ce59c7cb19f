"""Rung 1: one work-item per element of C, everything from global memory."""

from clgemm.rungs.base import Param, Rung

RUNG = Rung(
    number=1, slug="naive", title="naive",
    adds="one work-item per output, all reads from global memory",
    file="01_naive.cl", kernel="gemm_naive",
    params=(Param("TS", (4, 8, 16, 32), 16, "work-group side (TS x TS work-items)"),),
    derive=lambda p: {},
    constraints=(),
    local_size=lambda p: (p["TS"], p["TS"]),
    output_tile=lambda p: (p["TS"], p["TS"]),
    k_step=lambda p: 1,
    local_mem_bytes=lambda p: 0,
    teaches="coalescing: neighbouring work-items along M read neighbouring addresses of A",
)
