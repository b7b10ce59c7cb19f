"""Library kernel 12, "tiled" (clgemm/kernels/tiled.cl): the ladder's rungs 6-9 with everything
that makes them fast on real devices, for gemm() and the tuner rather than for the course.

Beyond rung 9 it has register vectors (VWM, VWN: the values of A and the sums as vectors of VWM
rows, those of B as vectors of VWN columns), both local tiles k-major so that those vectors are
single local reads, switches that read either operand straight from global memory instead of
through local memory (CACHE_A, CACHE_B), and three forms for CPUs: A and BT packed into panels
contiguous over k by helper steps (PANELS), a barrier per tile that keeps a CPU runtime's
work-items together through K (LOCKSTEP), and one work-item a group that copies its own tile's
operands into local memory a block of K at a time (PACK_K). On NVIDIA GPUs of compute capability 8.0 and newer
its tiles can come through cp.async pipelines of 2-4 stages (PIPELINE), and on GPUs the order of
its work-items (WARP_M) and of its tiles (RASTER) can change, and the loop over a tile's depth
can be unrolled outright (UNROLL_K). It has no padding and no sub-group shuffle. Its sizes
must be multiples of its tiles; `tiled_any.py` is the same kernel for any size.
"""

from __future__ import annotations

from clgemm.devices.limits import DeviceLimits
from clgemm.rungs.base import TRANSPOSE_B, Constraint, Helper, Param, Params, Rung, divisible
from clgemm.rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, TILE_PARAMS, local_size,
                                                output_tile)
from clgemm.rungs.r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM, derive_wide

VECTOR_PARAMS = (
    Param("VWM", (1, 2, 4, 8, 16), 1, "floats per register vector along M (A values, sums)",
          read_width=True),
    Param("VWN", (1, 2, 4, 8), 1, "floats per register vector along N (B values)",
          read_width=True),
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
               lambda p, d: d.device_type != "GPU" or (p["CACHE_A"] != 0 and p["CACHE_B"] != 0)),
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


PACK_K_PARAM = Param("PACK_K", (0, 4, 8, 16), 0, "0: a group of work-items shares the tile; P: "
                     "one work-item a group copies the tile's operands P tiles of K at a time "
                     "into local memory (CPUs)", minimum=0)


def packs_itself(p: Params) -> bool:
    """Whether a configuration is the tiled kernel's self-packing form (PACK_K): one work-item
    a group, which copies its own operands block by block. One stored before the parameter was
    has none and is not."""
    return bool(p.get("PACK_K", 0))


PACK_K_CONSTRAINTS = (
    Constraint("PACK_K is 0, 4, 8 or 16", "divisibility",
               lambda p, d: p["PACK_K"] in (0, 4, 8, 16)),
    Constraint("PACK_K=0 or CACHE_A = CACHE_B = PANELS = LOCKSTEP = PIPELINE = WARP_M = 0, "
               "KSPLIT = 1, VWN = 1, WPTM = VWM and WIDTH = 1 (one work-item copies the operands "
               "and walks pieces of one vector of rows)", "divisibility",
               lambda p, d: not p["PACK_K"] or (
                   p["CACHE_A"] == p["CACHE_B"] == p["PANELS"] == p["LOCKSTEP"] == 0
                   and p["PIPELINE"] == p["WARP_M"] == 0 and p["KSPLIT"] == 1
                   and p["VWN"] == 1 and p["WPTM"] == p["VWM"] and p["WIDTH"] == 1)),
    # A GPU's work-group of one work-item leaves all but one lane of its warp idle.
    Constraint("PACK_K = 0 on GPUs", "heuristic",
               lambda p, d: d.device_type != "GPU" or p["PACK_K"] == 0),
    # A copy's depth is PACK_K * TSK: with TSK at its largest each depth comes once.
    Constraint("PACK_K=0 or TSK = 32", "heuristic",
               lambda p, d: not p["PACK_K"] or p["TSK"] == 32),
)


#: threads of one NVIDIA warp: the block of work-items that WARP_M shapes
WARP = 32

ORDER_PARAMS = (
    Param("WARP_M", (0, 4, 8), 0, "0: work-items as launched; W: each 32 a W x (32/W) block",
          minimum=0, variant=True),
    Param("RASTER", (0, 8), 0, "0: tiles of C in the launch's order; R: in bands of R tile rows",
          minimum=0, variant=True),
)

UNROLL_PARAM = Param("UNROLL_K", (0, 1), 0, "0: the loop over a tile's depth as the compiler "
                     "leaves it; 1: unrolled outright", minimum=0, variant=True)


def warp_block_fits(p: Params) -> bool:
    """WARP_M = W reshapes each 32 work-items into a W x (32/W) block: W must divide the group's
    rows and 32/W its columns, and W must be below the rows (at the rows it changes nothing)."""
    w = p["WARP_M"]
    if w == 0:
        return True
    rows, cols = p["TSM"] // p["WPTM"], p["TSN"] // p["WPTN"]
    return (w in (1, 2, 4, 8, 16) and rows % w == 0 and w < rows
            and cols % (WARP // w) == 0)


PIPELINE_PARAM = Param("PIPELINE", (0, 2, 3, 4), 0, "0: next tiles through registers; S: S "
                       "local buffers filled by cp.async (NVIDIA sm_80+)", minimum=0,
                       variant=True)

#: cp.async, the copy from global to shared memory that PIPELINE issues, came with sm_80
ASYNC_COPY_MAJOR = 8

PIPELINE_CONSTRAINTS = (
    Constraint("PIPELINE is 0, 2, 3 or 4", "divisibility",
               lambda p, d: p["PIPELINE"] in (0, 2, 3, 4)),
    Constraint("PIPELINE=0 or CACHE_A = CACHE_B = 1 and WIDTH 1, 2 or 4 (one copy per vector)",
               "divisibility",
               lambda p, d: not p["PIPELINE"] or (p["CACHE_A"] == 1 and p["CACHE_B"] == 1
                                                  and p["WIDTH"] in (1, 2, 4))),
    Constraint("PIPELINE=0 or the device takes cp.async (NVIDIA, compute capability 8.0+)",
               "device",
               lambda p, d: not p["PIPELINE"] or d.compute_capability_at_least(ASYNC_COPY_MAJOR)),
)

ORDER_CONSTRAINTS = (
    Constraint("RASTER >= 0", "divisibility", lambda p, d: p["RASTER"] >= 0),
    Constraint("WARP_M = 0 or a W x (32/W) block of work-items that changes the order",
               "divisibility", lambda p, d: warp_block_fits(p)),
    # A CPU runtime runs a group's work-items as loops: their order is a relabelling there,
    # not reuse. The order of the groups is not: those the cores run at one time share the
    # last-level cache, and where the panels no longer fit it bands of tile rows took 11-12%
    # off a CPU's kernel (results/pocl/raster), so RASTER is the tune's to judge there too.
    Constraint("WARP_M = 0 on CPUs (work-items run as loops)", "heuristic",
               lambda p, d: d.device_type != "CPU" or p["WARP_M"] == 0),
)

UNROLL_CONSTRAINTS = (
    Constraint("UNROLL_K is 0 or 1", "divisibility", lambda p, d: p["UNROLL_K"] in (0, 1)),
    # A CPU's register block is unrolled already (the micro-kernel's UNROLLED); a whole tile's
    # depth on top of it only lengthens the build.
    Constraint("UNROLL_K = 0 on CPUs", "heuristic",
               lambda p, d: d.device_type != "CPU" or p["UNROLL_K"] == 0),
)


KSPLIT_PARAM = Param("KSPLIT", (1, 2, 4), 1, "1: a work-group walks all of K; S: S slices of "
                     "it walk one S-th each, summed in local memory (GPUs)", variant=True)

KSPLIT_CONSTRAINTS = (
    Constraint("KSPLIT is 1, 2 or 4", "divisibility", lambda p, d: p["KSPLIT"] in (1, 2, 4)),
    Constraint("KSPLIT=1 or CACHE_A = CACHE_B = 1, PIPELINE=0 and WARP_M=0 (each slice's own "
               "tiles, loaded through registers)", "divisibility",
               lambda p, d: p["KSPLIT"] == 1 or (p["CACHE_A"] == 1 and p["CACHE_B"] == 1
                                                 and p["PIPELINE"] == 0 and p["WARP_M"] == 0)),
    # The device's limits with the slices, read from KSPLIT itself: the tuner adds a variant
    # after the rest, and the limits of the kernel's geometry, read before, saw one slice.
    Constraint("KSPLIT > 1: the slices' work-items and local memory within the device's limits",
               "device",
               lambda p, d: sliced_group_fits(p, d)),
    # A CPU's compute units each run whole work-groups one after another: slicing a group's K
    # gives them no more to do at once, only the sums to add.
    Constraint("KSPLIT = 1 on CPUs", "heuristic",
               lambda p, d: d.device_type != "CPU" or p["KSPLIT"] == 1),
)


#: the floats by which the self-packing form's copy of each column of B is longer than its
#: depth (tiled.cl's B_SKEW)
B_SKEW = 16


def k_step(p: Params) -> int:
    """The steps of K each pass of a work-group takes: a tile's for each of KSPLIT slices, or
    the self-packing form's copy."""
    return p["TSK"] * slices_of(p) * max(1, p.get("PACK_K", 0))


def slices_of(p: Params) -> int:
    """A configuration's KSPLIT; one stored before the parameter was has none, and its kernel
    was built with the default, one slice."""
    return p.get("KSPLIT", 1)


def sliced_group_fits(p: Params, d: DeviceLimits) -> bool:
    """Whether the work-items of all KSPLIT slices, and their tiles and sums, fit the device
    (with one slice the geometry's own limits, which come later in the funnel, say it)."""
    if p["KSPLIT"] == 1:
        return True
    rows, cols = local_size(p)
    return (rows * cols * p["KSPLIT"] <= d.max_work_group_size
            and cols * p["KSPLIT"] <= d.max_work_item_sizes[1]
            and sliced_tile_bytes(p) <= d.local_mem_bytes)


def split_local_size(p: Params) -> tuple[int, int]:
    """The group of KSPLIT slices: each slice's work-items as `local_size` lays them out,
    the slices one after another along the second dimension, so that the launch's groups and
    their tiles of C are those of KSPLIT = 1."""
    if packs_itself(p):
        return 1, 1
    rows, cols = local_size(p)
    return rows, cols * slices_of(p)


def panel_helpers(panel_a: int, panel_b: int) -> tuple[Helper, Helper]:
    """Packing of A (rows of TSM) and of BT (rows of TSN) into panels contiguous over k; they
    run after the transpose of B, on its output."""
    return (Helper(name="A into panels", file="helpers.cl", kernel="pack_panels",
                   macros={"PANEL": panel_a}, local_size=(16, 16), operand="A"),
            Helper(name="BT into panels", file="helpers.cl", kernel="pack_panels",
                   macros={"PANEL": panel_b}, local_size=(16, 16), operand="B"))


def helpers_with_panels(p: Params) -> tuple[Helper, ...]:
    return panel_helpers(p["TSM"], p["TSN"]) if p["PANELS"] else ()


def derive_vectors(p: Params) -> dict[str, int]:
    return {**derive_wide(p), "VPTM": p["WPTM"] // p["VWM"], "VPTN": p["WPTN"] // p["VWN"]}


def double_tile_bytes(p: Params) -> int:
    """Two A tiles and two B tiles, of those operands that go through local memory."""
    per_buffer = p["TSK"] * (p["TSM"] * p["CACHE_A"] + p["TSN"] * p["CACHE_B"])
    return 2 * 4 * per_buffer


def pipeline_tile_bytes(p: Params) -> int:
    """The tiled kernel's buffers: two of each tile, or PIPELINE of them in its cp.async form."""
    return max(2, p["PIPELINE"]) * double_tile_bytes(p) // 2


def sliced_tile_bytes(p: Params) -> int:
    """The same for each of KSPLIT slices, and the sums of the slices that slice 0 adds; for
    the self-packing form, its copies of A and of B (each column B_SKEW floats longer)."""
    if packs_itself(p):
        depth = p["PACK_K"] * p["TSK"]
        return 4 * (p["TSM"] * depth + p["TSN"] * (depth + B_SKEW))
    slices = slices_of(p)
    return slices * pipeline_tile_bytes(p) + 4 * (slices - 1) * p["TSM"] * p["TSN"]


def tiled_slice_args(m: int, n: int, k: int, depth: int, a: object, bt: object,
                     out: object) -> list:
    """The batched form's arguments for C := A B on tight column-major A (M x K) and BT
    (N x K) with K in slices of `depth`: slice z is the next `depth` columns of each, its
    partial product the next M x N floats of `out`."""
    return [m, n, depth, a, bt, out, depth * m, depth * n, m * n]


def read_b_slice_args(m: int, n: int, k: int, depth: int, a: object, b: object,
                      out: object) -> list:
    """The same with B itself (K x N, BT_FROM_B): slice z is the next `depth` rows of its
    columns."""
    return [m, n, depth, a, b, out, depth * m, depth, m * n]


def tiled_stack_args(m: int, n: int, k: int, count: int, a: object, b: object,
                     c: object) -> list:
    """The batched form's arguments for a stack of COUNT products C_z := A_z B_z on tight
    column-major matrices one after another, B read as it lies (`STACK_MACROS`)."""
    return [m, n, k, a, b, c, m * k, k * n, m * n]


#: the tiled kernel's form for a stack: each product's B (K x N) read as it lies, so that a
#: C-ordered stack is one launch with no pack; `reads_b_itself` says which configurations
#: have it
STACK_MACROS = {"BT_FROM_B": 1, "STACKED_B": 1}


#: tiles through local memory with wide loads; register vectors of sums and of B; B read
#: from global memory; no local memory and no barrier; A and BT from panels; the same with a
#: barrier after every tile; warp blocks of work-items with tiles in bands; a cp.async pipeline
#: (NVIDIA sm_80 and newer: skipped elsewhere); K in four slices of a work-group (GPUs: skipped
#: on CPUs)
FORMS = {
    "local-memory": {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4},
    "vectors": {"VWM": 8, "VWN": 2},
    "b-global": {"TSM": 64, "TSN": 32, "TSK": 8, "WPTM": 16, "WPTN": 4, "VWM": 16, "VWN": 2,
                 "CACHE_B": 0},
    "no-local": {"TSM": 16, "TSN": 16, "TSK": 16, "WPTM": 16, "WPTN": 8, "WIDTH": 1,
                 "VWM": 16, "CACHE_A": 0, "CACHE_B": 0},
    "panels": {"TSM": 32, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 8, "WIDTH": 1, "VWM": 16,
               "VWN": 2, "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1},
    "lockstep": {"TSM": 64, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 8, "WIDTH": 1, "VWM": 16,
                 "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1, "LOCKSTEP": 1},
    "warps-bands": {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "WARP_M": 4,
                    "RASTER": 8, "VWM": 4, "VWN": 2},
    "pipeline": {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "WIDTH": 4, "VWM": 2,
                 "PIPELINE": 3},
    "k-slices": {"TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 4, "VWM": 4,
                 "VWN": 4, "KSPLIT": 4},
    "self-packing": {"TSM": 32, "TSN": 16, "TSK": 32, "WPTM": 8, "WPTN": 8, "WIDTH": 1,
                     "VWM": 8, "CACHE_A": 0, "CACHE_B": 0, "PACK_K": 4},
}

TILED = Rung(
    number=12, slug="tiled", title="tiled kernel: register vectors, local memory optional",
    adds="register vectors, local memory optional, CPU panels",
    file="tiled.cl", kernel="gemm_tiled",
    params=TILE_PARAMS + (WIDTH_PARAM,) + VECTOR_PARAMS + (PANELS_PARAM, LOCKSTEP_PARAM)
    + (PIPELINE_PARAM, KSPLIT_PARAM) + ORDER_PARAMS + (UNROLL_PARAM, PACK_K_PARAM),
    derive=derive_vectors,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS + VECTOR_CONSTRAINTS
    + PANEL_CONSTRAINTS + PIPELINE_CONSTRAINTS + ORDER_CONSTRAINTS + UNROLL_CONSTRAINTS
    + KSPLIT_CONSTRAINTS + PACK_K_CONSTRAINTS,
    local_size=split_local_size,
    group_slices=slices_of,
    output_tile=output_tile,
    k_step=k_step,
    local_mem_bytes=sliced_tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    extra_helpers=helpers_with_panels,
    helper_params=("PANELS", "TSM", "TSN"),
    # the slices are gemm()'s (`clgemm.configs.splits.tiled_slices`), not the configuration's
    slice_args=tiled_slice_args,
    stack_args=tiled_stack_args,
    stack_macros=STACK_MACROS,
    stack_accepts=lambda p: reads_b_itself(p),  # defined below: it resolves through TILED
    teaches="what the ladder leaves out: vector registers cut the local reads, and on a CPU "
            "leaving local memory and its barriers out, or packing panels, can beat staging",
    forms=FORMS,
)


#: a CPU's micro-kernel: one work-item a group, a 16 x 16 block of sums in 16 vector registers
#: of 16 floats, A and BT read from panels with no barrier (its register block unrolled: see
#: tiled.cl). The tuner measures it first on a CPU, since a search of this kernel's space in
#: a plain tune's time rarely reaches it by chance (the measurements are in
#: results/pocl/README.md).
CPU_MICRO_KERNEL: dict[str, int] = {"TSM": 16, "TSN": 16, "TSK": 32, "WPTM": 16, "WPTN": 16,
                                    "VWM": 16, "VWN": 1, "CACHE_A": 0, "CACHE_B": 0,
                                    "PANELS": 1, "LOCKSTEP": 0}

#: the same register block reading the caller's operands where they lie: no panels, 32 x 8
#: sums (two vectors of 16 rows by 8 columns), A read down its columns and B as it lies
#: (BT_FROM_B, `reads_b_itself`), C written by the kernel: one launch, no pack. It is slower
#: than the panels on large products, whose columns are a page apart, and faster on small ones,
#: where the packs are a large share of the call (results/pocl/in-place-*.txt); a CPU's tune
#: measures it second.
CPU_IN_PLACE: dict[str, int] = {**CPU_MICRO_KERNEL, "TSM": 32, "TSN": 8, "WPTM": 32, "WPTN": 8,
                                "PANELS": 0}


def cpu_self_packing(vector_floats: int) -> dict[str, int]:
    """The self-packing form (PACK_K) of a CPU's micro-kernel: a group is one work-item owning
    128 x 128 sums, in pieces of `vector_floats` x `vector_floats` (the CPU's vector width as
    `hardware.kernel_vector_floats` gives it: 16 x 16 fill half of an AVX-512 core's registers,
    8 x 8 half of an AVX2's), walked over copies of 256 steps of K. Which of it and the panels behind their pack runs a call faster depends on
    the CPU and the shape (results/xeon/self-packing, results/pocl/self-packing), so a CPU's
    tune measures both; tiles of 128 x 128 were the fastest of those tried there."""
    w = vector_floats
    return {**CPU_MICRO_KERNEL, "TSM": 128, "TSN": 128, "WPTM": w, "WPTN": w, "VWM": w,
            "WIDTH": 1, "PANELS": 0, "PACK_K": 8}


def reads_b_itself(params: Params) -> bool:
    """Whether a configuration can take B (K x N) where it lies instead of BT (BT_FROM_B):
    either its B tiles go through local memory, where the transpose happens, each a whole
    number of vectors deep; or it reads B straight from global memory one float at a time
    (no panels, no vectors along N), walking down B's columns."""
    p = TILED.resolve(dict(params))
    if p["PANELS"] or p["PIPELINE"]:
        return False
    if p["CACHE_B"]:
        return p["TSK"] % p["WIDTH"] == 0
    return p["VWN"] == 1


def tiled_macros(params: Params, batched: bool = False, reads_b: bool = False,
                 stacked_b: bool = False) -> dict[str, int]:
    """The -D set for one configuration, and for a stack of products (or of slices of K) where
    `batched` (the kernel then takes three strides more), reading B as it lies where
    `reads_b`; `stacked_b`: the stack's form reading each product's B as it lies."""
    if stacked_b:
        return {**TILED.macros(dict(params)), "BATCHED": 1, **STACK_MACROS}
    return {**TILED.macros(dict(params)), **({"BATCHED": 1} if batched else {}),
            **({"BT_FROM_B": 1} if reads_b else {})}
