"""Rung 4: vectors of WIDTH floats for global loads, local tiles and the accumulator."""

from clgemm.rungs.base import Constraint, Param, Rung, divisible

RUNG = Rung(
    number=4, slug="wide-types", title="wider data types",
    adds="floatWIDTH vectors for loads, tiles and accumulation",
    file="04_wide_types.cl", kernel="gemm_wide_types",
    params=(Param("TS", (8, 16, 32, 64), 32, "tile side"),
            Param("WIDTH", (1, 2, 4, 8), 4, "vector width")),
    derive=lambda p: {"TSW": p["TS"] // p["WIDTH"]},
    # The kernel spells out its multiply-add per width (MAC_VECTOR): no other width builds.
    constraints=(divisible("TS % WIDTH == 0", "TS", "WIDTH"),
                 Constraint("WIDTH is 1, 2, 4 or 8", "divisibility",
                            lambda p, d: p["WIDTH"] in (1, 2, 4, 8))),
    local_size=lambda p: (p["TS"] // p["WIDTH"], p["TS"]),
    output_tile=lambda p: (p["TS"], p["TS"]),
    k_step=lambda p: p["TS"],
    local_mem_bytes=lambda p: 2 * p["TS"] * p["TS"] * 4,
    teaches="wide memory instructions: one vector load moves WIDTH floats",
)
