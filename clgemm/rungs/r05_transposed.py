"""Rung 5: B transposed by a helper kernel, rectangular TSM x TSN x TSK tiles, padded B tile."""

from clgemm.rungs.base import TRANSPOSE_B, Constraint, Param, Rung, divisible


def _derive(p):
    rtsn = p["TSN"] // p["WPTN"]
    threads = p["TSM"] * rtsn
    return {"RTSN": rtsn,
            "LPTA": p["TSK"] * p["TSM"] // threads,
            "LPTB": p["TSK"] * p["TSN"] // threads}


def _threads(p):
    return p["TSM"] * (p["TSN"] // p["WPTN"])


RUNG = Rung(
    number=5, slug="transposed", title="transposed B, rectangular tiles",
    adds="B transposed by a helper; TSM x TSN x TSK tiles; padded local B tile",
    file="05_transposed.cl", kernel="gemm_transposed",
    params=(Param("TSM", (16, 32, 64, 128), 64, "tile rows (along M) = work-group rows"),
            Param("TSN", (16, 32, 64, 128), 64, "tile columns (along N)"),
            Param("TSK", (8, 16, 32, 64), 32, "tile depth (along K)"),
            Param("WPTN", (1, 2, 4, 8, 16), 8, "outputs per work-item along N"),
            Param("PAD", (0, 1, 2), 2, "floats of padding per row of the local B tile", minimum=0)),
    derive=_derive,
    constraints=(
        divisible("TSN % WPTN == 0", "TSN", "WPTN"),
        Constraint("TSK*TSM % work-items == 0 (whole A-tile loads)", "divisibility",
                   lambda p, d: (p["TSK"] * p["TSM"]) % _threads(p) == 0),
        Constraint("TSK*TSN % work-items == 0 (whole B-tile loads)", "divisibility",
                   lambda p, d: (p["TSK"] * p["TSN"]) % _threads(p) == 0),
    ),
    local_size=lambda p: (p["TSM"], p["TSN"] // p["WPTN"]),
    output_tile=lambda p: (p["TSM"], p["TSN"]),
    k_step=lambda p: p["TSK"],
    local_mem_bytes=lambda p: 4 * (p["TSK"] * p["TSM"] + p["TSN"] * (p["TSK"] + p["PAD"])),
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    teaches="local-memory banks and rectangular tiles: padding spreads a column over the banks",
)
