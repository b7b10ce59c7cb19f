"""Library kernel 11, "direct" (clgemm/kernels/direct.cl): the whole BLAS SGEMM in one launch.

C := alpha * op(A) * op(B) + beta * C for column-major matrices read in place (element offsets,
leading dimensions, either operand transposed) and any M, N >= 1, K >= 0, with no helper kernels.
It is described with the ladder's `Rung` record so that the tuner's machinery (candidates,
named constraints, device limits, geometry) applies to it, but it is not a rung of the ladder:
its arguments differ from the rungs' (M, N, K, A, B, C), so it is not in `REGISTRY` but in
`LIBRARY`, beside the tiled kernels.

The transpositions are macros too (TRANS_A, TRANS_B), but they are fixed by the call, not tuned:
`direct_macros` adds them to a parameter set. The kernel derives its work-group shape and load
counts itself (as every kernel file does) and refuses inconsistent parameters with #error; the
constraints below say the same things by name, before any compile.
"""

from __future__ import annotations

from clgemm.rungs.base import Constraint, Param, Params, Rung
from clgemm.rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, SCALAR_LOAD_CONSTRAINTS,
                                                derive_blocking, local_size, output_tile)

DIRECT_PARAMS = (
    Param("TSM", (16, 32, 64, 128), 64, "tile rows (along M)"),
    Param("TSN", (16, 32, 64, 128), 64, "tile columns (along N)"),
    Param("TSK", (4, 8, 16, 32), 16, "tile depth (along K)"),
    # Blocks up to 64 x 32 are for CPUs (see CPU_DEFAULTS); a GPU's tuner drops those with more
    # sums than registers by the heuristic constraint below.
    Param("WPTM", (1, 2, 4, 8, 16, 32, 64), 4, "outputs per work-item along M"),
    Param("WPTN", (1, 2, 4, 8, 16, 32), 4, "outputs per work-item along N"),
    Param("PAD", (0, 1), 1, "floats of padding per row of each local tile", minimum=0),
)


def tile_bytes(p: Params) -> int:
    """The local tiles of op(A) (TSK x (TSM+PAD)) and op(B) (TSK x (TSN+PAD)), in bytes."""
    return 4 * p["TSK"] * (p["TSM"] + p["TSN"] + 2 * p["PAD"])


#: A GPU work-item keeps its WPTM x WPTN sums in registers (at most 255 on NVIDIA's); beyond 64
#: sums, plus the WPTM + WPTN operands, they spill to memory.
GPU_REGISTERS = Constraint("WPTM*WPTN <= 64 on GPUs (sums in registers)", "heuristic",
                           lambda p, d: d.device_type != "GPU" or p["WPTM"] * p["WPTN"] <= 64)


DIRECT = Rung(
    number=11, slug="direct", title="direct GEMM",
    adds="the whole SGEMM in one kernel: alpha, beta, offsets, leading dimensions, transposes",
    file="direct.cl", kernel="gemm_direct",
    params=DIRECT_PARAMS,
    # Rung 6's work-group shape and scalar load counts, which the kernel derives itself too.
    derive=derive_blocking,
    # Rung 6's geometry: WPTM | TSM, WPTN | TSN, and each tile split evenly over the work-items.
    constraints=BLOCKING_CONSTRAINTS + SCALAR_LOAD_CONSTRAINTS + (GPU_REGISTERS,),
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: 1,
    local_mem_bytes=tile_bytes,
    transposed_b=False,
    any_size=True,
    helpers=(),
    launch_args=lambda m, n, k, a, b, c: [m, n, k, 1.0, 0.0, a, 0, m, b, 0, k, c, 0, m],
    stack_args=lambda m, n, k, count, a, b, c: [m, n, k, 1.0, 0.0, a, 0, m, b, 0, k, c, 0, m,
                                                m * k, k * n, m * n],
    teaches="one kernel for the BLAS interface: bounds-checked tile copies that read each "
            "operand along its contiguous dimension whatever the transposition",
    # small tiles with few outputs per work-item and no padding of the local tiles
    forms={"small": {"TSM": 16, "TSN": 32, "TSK": 8, "WPTM": 2, "WPTN": 4, "PAD": 0}},
)

#: A parameter set for CPUs through PoCL, all four transpositions alike. PoCL runs a
#: work-group's work-items as loops, so a few work-items with large blocks of sums do best, and
#: WPTN = 16 fills one 16-float vector register with a row of sums. The measurements behind it
#: are in docs/measurements.md.
CPU_DEFAULTS: dict[str, int] = {"TSM": 128, "TSN": 128, "TSK": 16, "WPTM": 64, "WPTN": 16,
                                "PAD": 1}


def direct_macros(params: Params, trans_a: bool, trans_b: bool,
                  batched: bool = False) -> dict[str, int]:
    """The -D set for one configuration and one pair of transpositions, and for a stack of
    products where `batched` (the kernel then takes three strides more). Parameters not given
    take their defaults; unknown ones are refused (`Rung.resolve`)."""
    return {**DIRECT.resolve(dict(params)), "TRANS_A": int(bool(trans_a)),
            "TRANS_B": int(bool(trans_b)), **({"BATCHED": 1} if batched else {})}


def direct_geometry(params: Params, m: int, n: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(global, local) sizes of the launch for an M x N result (M, N >= 1): one work-group per
    TSM x TSN tile of C, rounded up."""
    return DIRECT.geometry(DIRECT.resolve(dict(params)), m, n)


def batched_geometry(params: Params, m: int, n: int, batch: int
                     ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(global, local) sizes of a launch of `batch` products M x N: the tiles of one product in
    the first two dimensions, one work-group per product along the third."""
    (gx, gy), (lx, ly) = direct_geometry(params, m, n)
    return (gx, gy, batch), (lx, ly, 1)
