"""A configuration made ready to run: its kernel and its helper kernels built, chained through
their buffers, with the geometry and arguments of every launch.

The ladder's runner, the bench and gemm() all run a rung this way, so a rung's helper steps, its
launch geometry and its argument list are worked out in one place. Preparing builds every kernel
before anything is queued: a configuration that fails to build leaves nothing half done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from clgemm.backends import Backend
from clgemm.core.errors import UsageError
from clgemm.devices.hardware import kernel_vector_floats
from clgemm.devices.info import DeviceInfo
from clgemm.rungs import Helper, Rung
from clgemm.rungs.tiled import TILED, read_b_slice_args
from clgemm.rungs.tiled_any import TILED_ANY, whole_vectors

#: (what the buffer holds, float count) -> a device buffer; runners reuse theirs across rungs,
#: gemm() takes them from the backend's pool
Scratch = Callable[[str, int], Any]


@dataclass
class Launch:
    """One kernel launch."""

    what: str
    kernel: Any
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]
    args: list

    def enqueue(self, backend: Backend, queue: Any = None) -> None:
        backend.enqueue(self.kernel, self.global_size, self.local_size, self.args, queue)

    def timed(self, backend: Backend) -> float:
        """Run to completion; device milliseconds."""
        return backend.launch(self.kernel, self.global_size, self.local_size, self.args)


@dataclass
class Prepared:
    """The helper steps (in order, each reading what the one before wrote) and the rung's own
    launch."""

    rung: Rung
    params: dict[str, int]
    main: Launch
    helpers: list[Launch] = field(default_factory=list)
    #: launches that finish the rung's product after its own: the sum of K's slices, for a
    #: configuration that splits K (`Rung.k_slices`)
    after: list[Launch] = field(default_factory=list)
    #: whether `helpers` are the pack that gemm() runs before every call of the configuration
    #: (a panels form's), whose time a measurement counts in the configuration's own
    pack_in_call: bool = False

    def enqueue(self, backend: Backend, queue: Any = None) -> None:
        """Queue every launch without waiting (the library path)."""
        for step in self.helpers:
            step.enqueue(backend, queue)
        self.main.enqueue(backend, queue)
        for step in self.after:
            step.enqueue(backend, queue)

    def time_helpers(self, backend: Backend) -> float:
        return sum(step.timed(backend) for step in self.helpers)

    def time_main(self, backend: Backend) -> float:
        """The rung's product: its launch and the launches that finish it."""
        return self.main.timed(backend) + sum(step.timed(backend) for step in self.after)


def round_up(x: int, mult: int) -> int:
    """The smallest multiple of `mult` not below `x`: a launch covers whole work-groups."""
    return -(-x // mult) * mult


#: the BLAS helpers: packs, copies, the epilogue, the sum of K's slices
HELPERS_FILE = "blas_helpers.cl"


def pack_tile(backend: Backend) -> int:
    """The side of the helpers' square work-group where their block is square."""
    return 16 if backend.device.max_work_group_size >= 256 else 8


def helper_block(backend: Backend, kernel: str) -> tuple[int, int]:
    """The side of the block of elements a work-group of `kernel` (a helper of
    blas_helpers.cl) covers, and its rows of work-items (PACK_TILE, PACK_ROWS). On a GPU a 32 x
    32 block by 32 x 8 work-items, each moving four elements, keeps more loads in flight than
    one element a work-item, and the copies ran nearer the memory's bandwidth
    (results/h100/transpose/, results/h100/helper-block/). Elsewhere, and for the sum of slices,
    one element a work-item in square work-groups: on a CPU the transpose ran slower so, and
    the sum of slices reads every slice of each element of products too small to fill a GPU
    with a quarter as many work-groups."""
    t = pack_tile(backend)
    if (kernel == "reduce_splits" or backend.device.is_cpu
            or backend.device.max_work_group_size < 256):
        return t, t
    return 32, 8


def helper_kernel(backend: Backend, kernel: str, batched: bool = False) -> Any:
    """One kernel of blas_helpers.cl (packs, the epilogue, the sum of slices), built for its
    block (`helper_block`); `batched`: pack_transpose's form for a stack."""
    tile, rows = helper_block(backend, kernel)
    return backend.program(HELPERS_FILE, {"PACK_TILE": tile, "PACK_ROWS": rows,
                                          **({"BATCHED": 1} if batched else {})}, kernel)


#: columns of a panel each work-item of `pack_panels_pair` packs
PANEL_RUN = 64
#: the side of the squares in which `pack_panels_pair` transposes an operand read across its
#: rows, on a device that is not a CPU (`pack_square`): a column's stores fill a cache line of
#: the panel (results/pocl/pack-transpose)
PACK_SUB = 16


def pack_square(device: DeviceInfo) -> int:
    """The side of the pack's squares on `device`. On a CPU it is the floats of one of its
    vectors: a square's rows are then one vector load each and the square fits the vector
    registers while it is turned, where squares twice as wide as an AVX2 vector spilled and
    packed at two thirds the speed (results/pocl/pack-square)."""
    if not device.is_cpu:
        return PACK_SUB
    return kernel_vector_floats(device.name)


def panels_pair_kernel(backend: Backend, panel_a: int, panel_b: int) -> Any:
    """`pack_panels_pair` built for panels of `panel_a` rows of A and `panel_b` of BT. On a
    CPU an operand read as stored is packed down its columns, long runs of floats that its
    prefetchers follow; elsewhere by a panel's blocks, as the tunes that chose panels there
    measured it."""
    return backend.program(HELPERS_FILE, {"PANEL_A": panel_a, "PANEL_B": panel_b,
                                          "PANEL_RUN": PANEL_RUN,
                                          "PACK_SUB": pack_square(backend.device),
                                          "PACK_COLUMNS": int(backend.device.is_cpu)},
                           "pack_panels_pair")


#: an operand as `pack_panels_pair` reads it: the buffer, the offset and leading dimension of
#: the stored matrix, and whether the panels' rows are its columns
PackSource = tuple[Any, int, int, bool]


def panel_pair_launch(backend: Backend, panels: tuple[int, int], sizes: tuple[int, int, int],
                      padded: tuple[int, int, int], a: PackSource, bt: PackSource,
                      out: tuple[Any, Any]) -> Launch:
    """The one launch that packs A (M x K) and BT (N x K) into the panels of a tiled kernel's
    panels form (rows of `panels[0]` and `panels[1]`), zero-padded to the `padded` sizes: what
    gemm() runs before every call of such a configuration, and what measuring it counts. A
    work-item packs a block of a panel; on a CPU, where panels are read, one work-item is a
    group, and anywhere else a few, since only a tune that measures panels there would have
    them run."""
    (m, n, k), (mp, np_, kp) = sizes, padded
    runs = -(-kp // PANEL_RUN)
    blocks_a, blocks_b = mp // panels[0] * runs, np_ // panels[1] * runs
    group = 1 if backend.device.is_cpu else 64
    (sa, offset_a, ld_a, trans_a), (sb, offset_b, ld_b, trans_b) = a, bt
    return Launch("A and BT into panels", panels_pair_kernel(backend, *panels),
                  (round_up(blocks_a + blocks_b, group),), (group,),
                  [m, k, kp, sa, offset_a, ld_a, int(trans_a), out[0], blocks_a,
                   n, k, kp, sb, offset_b, ld_b, int(trans_b), out[1], blocks_b])


def tiles_geometry(backend: Backend, kernel: str, rows: int, cols: int
                   ) -> tuple[tuple[int, int], tuple[int, int]]:
    """Global and local size of the helper `kernel` writing a rows x cols matrix: one
    work-group per block of `helper_block`, its columns of work-items along the rows."""
    tile, per = helper_block(backend, kernel)
    return (round_up(rows, tile), round_up(cols, tile) // tile * per), (tile, per)


def sum_of_slices(backend: Backend, m: int, n: int, slices: int, partial: Any, c: Any,
                  alpha: float | np.float32 = 1.0, beta: float | np.float32 = 0.0,
                  c_offset: int = 0, ldc: int | None = None,
                  padded: tuple[int, int] | None = None) -> Launch:
    """`reduce_splits`: `slices` partial products, one after another, summed into C := alpha*P
    + beta*C (C read only where beta is not 0). Each is M x N tight, or `padded` rows x columns
    where the product was padded to the kernel's tiles, of which the first M x N are summed."""
    rows, cols = padded or (m, n)
    return Launch("sum of the slices", helper_kernel(backend, "reduce_splits"),
                  *tiles_geometry(backend, "reduce_splits", m, n),
                  [m, n, slices, alpha, partial, rows, rows * cols, beta, c, c_offset, ldc or m,
                   int(beta != 0)])


def helper_geometry(helper: Helper, rows: int, cols: int) -> tuple[tuple[int, int],
                                                                    tuple[int, int]]:
    """Global and local size of a helper with one work-item per element of the rows x cols
    matrix it reads."""
    tx, ty = helper.local_size
    return (round_up(rows, tx), round_up(cols, ty)), helper.local_size


def scratch_name(helper: Helper) -> str:
    """What a helper's output holds, so that configurations whose helpers make the same thing
    share one buffer."""
    if helper.kernel == "transpose":
        return "BT"
    return f"{helper.operand} panels of {helper.macros['PANEL']}"


def helper_rows(helper: Helper, m: int, n: int, k: int) -> tuple[int, int]:
    """The rows and columns of what a helper reads: B is K x N; A (M x K) and BT (N x K) are
    packed into panels along K."""
    if helper.kernel == "transpose":
        return k, n
    return (m if helper.operand == "A" else n), k


def slices_to_run(rung: Rung, params: Mapping[str, int], k: int, slices: int | None) -> int:
    """The slices of K `prepare` runs: the caller's where it gives them to a rung with a
    batched form over slices, else those the configuration says."""
    if slices is None or rung.slice_args is None:
        return rung.k_slices(params, k) if rung.k_slices and rung.slice_args else 1
    return slices


def main_macros(rung: Rung, params: Mapping[str, int], m: int, n: int, slices: int,
                reads_b: bool) -> dict[str, int]:
    """The macros `prepare` builds the rung's own kernel with, apart so that a pre-builder can
    compile the very variant a measurement will launch (a variant compiled only where it is
    launched is compiled there one configuration after another)."""
    # tight operands on the vector width of the kernel for any size lie as its PADDED_LD form
    # reads them, which gemm() builds there
    padded = rung.number == TILED_ANY.number and whole_vectors(params, m, n)
    return {**rung.macros(params), **({"BATCHED": 1} if slices > 1 else {}),
            **({"BT_FROM_B": 1} if reads_b else {}), **({"PADDED_LD": 1} if padded else {})}


def _panel_pack(helper: Helper) -> bool:
    """Whether a helper is one of a panels form's packs."""
    return helper.kernel == "pack_panels"


def packs_in_call(helpers: Sequence[Helper]) -> bool:
    """Whether a configuration's helpers are a panels form's packs, which gemm() runs as one
    pack of both operands before every call and which its measured time counts
    (`Prepared.pack_in_call`)."""
    return any(_panel_pack(h) for h in helpers)


def _panel_pair_step(backend: Backend, panels: Sequence[Helper], m: int, n: int, k: int,
                     a: Any, b: Any, scratch: Scratch) -> tuple[Launch, Any, Any]:
    """A panels form's packing helpers as gemm() runs them before every call: both operands in
    one launch (`panel_pair_launch`), B (K x N) read where it lies, with no transpose of B
    first; and the panels of A and of BT it writes."""
    by_operand = {h.operand: h for h in panels}
    out_a, out_b = (scratch(scratch_name(by_operand[x]), rows * k)
                    for x, rows in (("A", m), ("B", n)))
    heights = (by_operand["A"].macros["PANEL"], by_operand["B"].macros["PANEL"])
    return (panel_pair_launch(backend, heights, (m, n, k), (m, n, k), (a, 0, m, False),
                              (b, 0, k, True), (out_a, out_b)), out_a, out_b)


def prepare(backend: Backend, rung: Rung, params: Mapping[str, int], m: int, n: int, k: int,
            a: Any, b: Any, c: Any, helpers: Sequence[Helper], scratch: Scratch,
            slices: int | None = None, reads_b: bool = False) -> Prepared:
    """Build and chain one configuration computing C := A B on tight column-major buffers
    (M x N x K as the rung sees them). `helpers` are the steps to run before the rung: all of
    `rung.helpers_for(params)` for operands as they come, fewer where the caller has done
    some (gemm() transposes B while packing it). K runs in `slices` where given (the caller's
    split, for a rung with a batched form over slices), else in those the configuration says
    (`Rung.k_slices`). With `reads_b` the tiled kernel reads B (K x N) as it lies, as gemm()
    has it do where that pays: no transpose before it. A panels form's helpers run as gemm()
    runs them, one pack of both operands (`Prepared.pack_in_call`). Raises BuildError before
    anything runs."""
    slices = slices_to_run(rung, params, k, slices)
    if reads_b and rung.number != TILED.number:
        raise UsageError(f"only the tiled kernel reads B as it lies, not rung {rung.number}")
    main_kernel = backend.program(rung.file, main_macros(rung, params, m, n, slices, reads_b),
                                  rung.kernel)
    steps = []
    panels = [h for h in helpers if _panel_pack(h)]
    if panels:
        pack, a, b = _panel_pair_step(backend, panels, m, n, k, a, b, scratch)
        steps.append(pack)
        helpers = []
    for helper in helpers:
        if reads_b and helper.operand == "B":
            continue
        rows, cols = helper_rows(helper, m, n, k)
        out = scratch(scratch_name(helper), rows * cols)
        if helper.kernel == "transpose":
            src, b = b, out
        elif helper.operand == "A":
            src, a = a, out
        else:
            src, b = b, out
        gsize, lsize = helper_geometry(helper, rows, cols)
        kernel = backend.program(helper.file, helper.macros, helper.kernel)
        steps.append(Launch(helper.name, kernel, gsize, lsize, [rows, cols, src, out]))
    gsize, lsize = rung.geometry(params, m, n)
    if slices == 1 or rung.slice_args is None:  # (the second only for the type checker)
        main = Launch(f"rung {rung.number}", main_kernel, gsize, lsize,
                      rung.args(m, n, k, a, b, c))
        return Prepared(rung, dict(params), main, steps, pack_in_call=bool(panels))
    # K in slices: the batched form multiplies slice z of A's columns by slice z of B's rows
    # into partial product z, and `reduce_splits` sums them into C.
    partial = scratch("partial products", slices * m * n)
    slice_args = read_b_slice_args if reads_b else rung.slice_args
    main = Launch(f"rung {rung.number}, K split", main_kernel, (*gsize, slices), (*lsize, 1),
                  slice_args(m, n, k, rung.slice_depth(params, k, slices), a, b, partial))
    return Prepared(rung, dict(params), main, steps,
                    [sum_of_slices(backend, m, n, slices, partial, c)], bool(panels))


def stack_form_macros(rung: Rung, params: Mapping[str, int]) -> dict[str, int]:
    """The macros of a rung's batched form for a stack of products (`prepare_stack`)."""
    return {**rung.macros(params), "BATCHED": 1, **rung.stack_macros}


def prepare_stack(backend: Backend, rung: Rung, params: Mapping[str, int], m: int, n: int, k: int,
                  count: int, a: Any, b: Any, c: Any) -> Prepared:
    """Build one configuration's batched form for a stack of `count` products C_z := A_z B_z,
    the tight column-major matrices of each operand one after the other: one launch, the
    products along its third dimension, as gemm() runs a stack. Raises BuildError before
    anything runs."""
    if rung.stack_args is None or (rung.stack_accepts and not rung.stack_accepts(params)):
        raise UsageError(f"rung {rung.number} ({rung.slug}) has no batched form for a stack "
                         f"of products" + ("" if rung.stack_args is None else
                                           " in this configuration"))
    kernel = backend.program(rung.file, stack_form_macros(rung, params), rung.kernel)
    gsize, lsize = rung.geometry(params, m, n)
    main = Launch(f"rung {rung.number}, {count} products", kernel, (*gsize, count),
                  (*lsize, 1), rung.stack_args(m, n, k, count, a, b, c))
    return Prepared(rung, dict(params), main, [])
