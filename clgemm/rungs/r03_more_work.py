"""Rung 3: WPT outputs per work-item, so that one local read of A feeds WPT products."""

from clgemm.rungs.base import Param, Rung, divisible

RUNG = Rung(
    number=3, slug="more-work", title="more work per work-item",
    adds="WPT outputs per work-item along N",
    file="03_more_work.cl", kernel="gemm_more_work",
    params=(Param("TS", (8, 16, 32, 64), 32, "tile side"),
            Param("WPT", (1, 2, 4, 8, 16), 8, "outputs per work-item")),
    derive=lambda p: {"RTS": p["TS"] // p["WPT"]},
    constraints=(divisible("TS % WPT == 0", "TS", "WPT"),),
    local_size=lambda p: (p["TS"], p["TS"] // p["WPT"]),
    output_tile=lambda p: (p["TS"], p["TS"]),
    k_step=lambda p: p["TS"],
    local_mem_bytes=lambda p: 2 * p["TS"] * p["TS"] * 4,
    teaches="registers: an accumulator array per work-item and fewer local-memory reads per FMA",
)
