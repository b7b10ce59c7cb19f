"""Library kernel 14, "skinny" (clgemm/kernels/skinny.cl): a product whose C has at most a few
dozen rows or columns, in one launch that reads the long operand once.

The kernel computes O := alpha X Y + beta O for a long X (R x K) and a short Y (K x S), every
operand given by an offset and two strides, so that C = op(A) op(B) with N the short side and,
read as its transpose, with M the short side are the same build. Which side is short decides
the grid (`skinny_geometry`): the short one of M and N, N where they are equal. Its work-groups
spread K over lanes as well as the long side over work-items, so the tuner's tile heuristics,
which count work-groups as tiles of C, do not judge it. A configuration may also split K over
work-groups (SPLIT): its batched form runs the slices, and `reduce_splits` sums them, which the
tuner times with it (`k_slices`, `slice_args`).
"""

from __future__ import annotations

from clgemm.rungs.base import Constraint, Param, Params, Rung

SKINNY_PARAMS = (
    Param("LR", (8, 16, 32, 64, 128), 32, "work-items per group along the long side"),
    Param("LK", (1, 2, 4, 8, 16, 32), 8, "work-items per group along K (lanes)"),
    Param("VR", (1, 2, 4), 1, "rows of the long side per work-item"),
    Param("SB", (4, 8, 16, 32, 64), 16, "columns of the short side per work-group"),
    Param("KC", (1, 2, 4, 8, 16), 4, "steps along K per lane and chunk (loads in flight)"),
    Param("YLOCAL", (0, 1), 1, "1: the short operand's block staged in local memory per chunk; "
          "0: read where it lies, no barrier in the loop", minimum=0),
    Param("PREFETCH", (0, 1), 0, "1: the next chunk's values of the long operand loaded while "
          "this one is multiplied", minimum=0),
    Param("SPLIT", (1, 2, 4, 8), 1, "slices of K over work-groups (where they divide K), summed "
          "by one more launch"),
)

#: the short side of C up to which gemm() considers the kernel
SHORT_MAX = 64


def local_size(p: Params) -> tuple[int, int]:
    return (p["LR"], p["LK"])


def output_tile(p: Params) -> tuple[int, int]:
    """The block of O a work-group writes: rows of the long side by columns of the short."""
    return (p["LR"] * p["VR"], p["SB"])


def local_bytes(p: Params) -> int:
    """Y's block ([LK*KC][SB+4] floats, where staged) or the lanes' sums (LK x LR*VR float4s),
    which share one buffer: the block is used along K, the sums after."""
    staged = p["YLOCAL"] * p["LK"] * p["KC"] * (p["SB"] + 4)
    return 4 * max(staged, 4 * p["LK"] * p["LR"] * p["VR"])


def short_is_n(m: int, n: int) -> bool:
    """Whether N is the short side (else M is, and the kernel computes C^T)."""
    return n <= m


def skinny_geometry(p: Params, m: int, n: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(global, local) sizes for an M x N result: groups along the long side by groups along
    the short one."""
    long_side, short_side = (m, n) if short_is_n(m, n) else (n, m)
    tr, sb = output_tile(p)
    return ((-(-long_side // tr) * p["LR"], -(-short_side // sb) * p["LK"]),
            (p["LR"], p["LK"]))


def skinny_macros(params: Params, batched: bool = False) -> dict[str, int]:
    """The -D set for one configuration, and for a stack of products where `batched` (the
    kernel then takes three strides more)."""
    return {**SKINNY.resolve(dict(params)), **({"BATCHED": 1} if batched else {})}


def batched_geometry(params: Params, m: int, n: int, batch: int
                     ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(global, local) sizes of a launch of `batch` products M x N: one product's grid in the
    first two dimensions, one work-group per product along the third."""
    (gx, gy), (lx, ly) = skinny_geometry(SKINNY.resolve(dict(params)), m, n)
    return (gx, gy, batch), (lx, ly, 1)


def k_slices(params: Params, k: int) -> int:
    """Into how many slices of K a configuration runs at this K: SPLIT where it divides K, else
    none (the tuner measures it at a K that every value divides)."""
    split = params.get("SPLIT", 1)
    return split if split > 1 and k % split == 0 else 1


def slice_strides(m: int, n: int, along_a: int, along_b: int) -> list[int]:
    """The batched form's strides from one slice of K to the next: X's and Y's (op(A), op(B)
    where N is the short side, else op(B)^T and op(A)^T) and the partial products' (M x N)."""
    return [along_a, along_b, m * n] if short_is_n(m, n) else [along_b, along_a, m * n]


def slice_args(m: int, n: int, k: int, depth: int, a: object, b: object, out: object) -> list:
    """The batched form's arguments for C := A B on tight column-major buffers (A m x k, B
    k x n) with K in slices of `depth`: the partial products one after another in `out`."""
    return [*skinny_args(m, n, depth, a, b, out, lda=m, ldb=k),
            *slice_strides(m, n, depth * m, depth)]


def skinny_args(m: int, n: int, k: int, a: object, b: object, c: object,
                lda: int | None = None, ldb: int | None = None) -> list:
    """The arguments for C := A B on column-major buffers (A m x k, B k x n, tight unless
    `lda`, `ldb` say otherwise)."""
    return skinny_launch(m, n, k, 1.0, 0.0, a, 0, lda or m, False, b, 0, ldb or k, False,
                         c, 0, m)


#: A GPU work-item keeps VR x SB sums and KC x VR loaded values in registers (twice as many
#: with PREFETCH).
GPU_REGISTERS = Constraint("VR*SB + (1+PREFETCH)*KC*VR <= 128 on GPUs (sums and loads in "
                           "registers)", "heuristic",
                           lambda p, d: d.device_type != "GPU"
                           or p["VR"] * p["SB"] + (1 + p["PREFETCH"]) * p["KC"] * p["VR"] <= 128)

SKINNY = Rung(
    number=14, slug="skinny", title="skinny GEMM",
    adds="few rows or columns of C: the long operand streamed once, K spread over lanes",
    file="skinny.cl", kernel="gemm_skinny",
    params=SKINNY_PARAMS,
    derive=lambda p: {"THREADS": p["LR"] * p["LK"], "TR": p["LR"] * p["VR"],
                      "CHUNK": p["LK"] * p["KC"]},
    constraints=(GPU_REGISTERS,),
    local_size=local_size,
    output_tile=output_tile,
    # the fewest steps along K that use every slice: a pre-build at that K builds the batched
    # form that a split runs
    k_step=lambda p: p.get("SPLIT", 1),
    local_mem_bytes=local_bytes,
    any_size=True,
    launch_args=skinny_args,
    launch_geometry=skinny_geometry,
    k_slices=k_slices,
    slice_args=slice_args,
    tile_heuristics=False,
    # more rows per work-item with one lane; blocks of the short side narrower than it, with
    # many lanes and a chunk that K does not divide; the short operand read where it lies; the
    # next chunk loaded during this one (the defaults and `global` have come out wrong under
    # PoCL 5.0 on some hosts: results/xeon/skinny-pocl5.txt, results/h100/wave-launch/README.md)
    forms={"rows": {"LR": 16, "LK": 1, "VR": 4, "SB": 8, "KC": 2},
           "lanes": {"LR": 8, "LK": 16, "VR": 2, "SB": 4, "KC": 4},
           "global": {"LR": 16, "LK": 8, "VR": 2, "SB": 8, "KC": 4, "YLOCAL": 0, "PREFETCH": 1},
           "prefetch": {"LR": 32, "LK": 4, "VR": 1, "SB": 16, "KC": 2, "PREFETCH": 1}},
    teaches="a memory-bound product: one pass over the long operand, lanes along K summed "
            "through local memory",
)


def skinny_launch(m: int, n: int, k: int, alpha: object, beta: object,
                  a: object, a_offset: int, lda: int, a_trans: bool,
                  b: object, b_offset: int, ldb: int, b_trans: bool,
                  c: object, c_offset: int, ldc: int) -> list:
    """The kernel's arguments for C := alpha op(A) op(B) + beta C on column-major operands
    where they lie (offsets, leading dimensions, transposes)."""
    # op(A)(i, p) = A[a_offset + i*ai + p*ap]; op(B)(p, j) = B[b_offset + p*bp + j*bj]
    ai, ap = (lda, 1) if a_trans else (1, lda)
    bp, bj = (ldb, 1) if b_trans else (1, ldb)
    if short_is_n(m, n):
        return [m, n, k, alpha, beta, a, a_offset, ai, ap, b, b_offset, bp, bj,
                c, c_offset, 1, ldc]
    return [n, m, k, alpha, beta, b, b_offset, bj, bp, a, a_offset, ap, ai, c, c_offset, ldc, 1]
