"""The direct GEMM kernel (kernels/direct.cl): the whole BLAS SGEMM in one launch.

C := alpha * op(A) * op(B) + beta * C for column-major matrices read in place (element offsets,
leading dimensions, either operand transposed) and any M, N >= 1, K >= 0, with no helper kernels.
It is described with the ladder's `Rung` record so that the tuner's machinery (candidates,
named constraints, device limits, geometry) applies to it, but it is not a rung of the ladder:
its arguments differ from the rungs' (M, N, K, A, B, C), so it is not in `REGISTRY`.

The transpositions are macros too (TRANS_A, TRANS_B), but they are fixed by the call, not tuned:
`direct_macros` adds them to a parameter set. The kernel derives its work-group shape and load
counts itself and refuses inconsistent parameters with #error; the constraints below say the same
things by name, before any compile.
"""

from __future__ import annotations

from .rungs import Param, Params, Rung
from .rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, SCALAR_LOAD_CONSTRAINTS,
                                          local_size, output_tile)

DIRECT_PARAMS = (
    Param("TSM", (16, 32, 64, 128), 64, "tile rows (along M)"),
    Param("TSN", (16, 32, 64, 128), 64, "tile columns (along N)"),
    Param("TSK", (4, 8, 16, 32), 16, "tile depth (along K)"),
    Param("WPTM", (1, 2, 4, 8), 4, "outputs per work-item along M"),
    Param("WPTN", (1, 2, 4, 8), 4, "outputs per work-item along N"),
    Param("PAD", (0, 1), 1, "floats of padding per row of each local tile", minimum=0),
)


def tile_bytes(p: Params) -> int:
    """The local tiles of op(A) (TSK x (TSM+PAD)) and op(B) (TSK x (TSN+PAD)), in bytes."""
    return 4 * p["TSK"] * (p["TSM"] + p["TSN"] + 2 * p["PAD"])


DIRECT = Rung(
    number=11, slug="direct", title="direct GEMM",
    adds="the whole SGEMM in one kernel: alpha, beta, offsets, leading dimensions, transposes",
    file="direct.cl", kernel="gemm_direct",
    params=DIRECT_PARAMS,
    # The kernel computes RTSM, RTSN, LPTA and LPTB itself; passing them as -D too would
    # redefine them.
    derive=lambda p: {},
    # Rung 6's geometry: WPTM | TSM, WPTN | TSN, and each tile split evenly over the work-items.
    constraints=BLOCKING_CONSTRAINTS + SCALAR_LOAD_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: 1,
    local_mem_bytes=tile_bytes,
    transposed_b=False,
    any_size=True,
    helpers=(),
    teaches="one kernel for the BLAS interface: bounds-checked tile copies that read each "
            "operand along its contiguous dimension whatever the transposition",
)

#: A parameter set for a 2-core AVX-512 CPU through PoCL 3.1, all four transpositions alike.
#: Measured with this kernel on that machine (median of 5 launches, GFLOP/s at 256^3 / 512^3,
#: NN; see the commit that set it):
#:   TSM=64  TSN=64  TSK=16 WPTM=4  WPTN=4  (GPU defaults)   ? / ?
CPU_DEFAULTS: dict[str, int] = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "PAD": 1}


def direct_macros(params: Params, trans_a: bool, trans_b: bool) -> dict[str, int]:
    """The -D set for one configuration and one pair of transpositions. Parameters not given
    take their defaults; unknown ones are refused (`Rung.resolve`)."""
    return {**DIRECT.resolve(dict(params)), "TRANS_A": int(bool(trans_a)),
            "TRANS_B": int(bool(trans_b))}


def direct_geometry(params: Params, m: int, n: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(global, local) sizes of the launch for an M x N result (M, N >= 1): one work-group per
    TSM x TSN tile of C, rounded up."""
    return DIRECT.geometry(DIRECT.resolve(dict(params)), m, n)
