"""A plan made ready to run: every kernel a call launches (copies of operands that share memory
with C, packs, a rung's panel helpers, the rung or the direct kernel, the epilogue) as one list
of prepared launches, built once per call signature.

The launches' arguments name the call's buffers by slot (A, B, C, and the scratch buffers the
plan takes from the pool), so the list is worked out once: its kernels built, its geometry
checked against the API's limits, its argument lists laid out. A call then fills the slots
with its own buffers and queues the launches, which is all a repeated call costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clgemm.backends import Backend, Mat, PreparedLaunch
from clgemm.configs.launch import (Launch, helper_kernel, panel_pair_launch, prepare,
                                   sum_of_slices, tiles_geometry)
from clgemm.core.errors import UsageError
from clgemm.library.order import LaunchOrder
from clgemm.library.plan import Plan, copies, panel_steps, stored
from clgemm.rungs import get_rung
from clgemm.rungs.direct import DIRECT, batched_geometry, direct_geometry, direct_macros
from clgemm.rungs.skinny import SKINNY
from clgemm.rungs.skinny import batched_geometry as skinny_batched_geometry
from clgemm.rungs.skinny import skinny_launch, skinny_macros, slice_strides
from clgemm.rungs.tiled import TILED, read_b_slice_args, tiled_macros

@dataclass(frozen=True)
class Slot:
    """A buffer an argument list names before the call gives it: "a", "b", "c", or the index
    of a scratch buffer."""

    name: str | int


A, B, C = Slot("a"), Slot("b"), Slot("c")


@dataclass
class CallProgram:
    """The launches of one plan, in order, with the scratch buffers they use (float counts)."""

    plan: Plan
    #: whether A and whether B share memory with C, as the program was made for
    alias: tuple[bool, bool] = (False, False)
    launches: list[Launch] = field(default_factory=list)
    scratch: list[int] = field(default_factory=list)
    #: per launch, the positions of its arguments that are slots
    slots: list[list[tuple[int, Slot]]] = field(default_factory=list)
    #: the launches as the backend prepared them, on the first run
    ready: list[PreparedLaunch] | None = field(default=None, repr=False, compare=False)

    def new_scratch(self, count: int) -> Slot:
        self.scratch.append(count)
        return Slot(len(self.scratch) - 1)

    def add(self, what: str, kernel: Any, gsize: Any, lsize: Any, args: list) -> None:
        self.launches.append(Launch(what, kernel, tuple(gsize), tuple(lsize), args))
        self.slots.append([(i, x) for i, x in enumerate(args) if isinstance(x, Slot)])

    def check_groups(self, backend: Backend) -> None:
        """Refuse, before anything runs, a launch with more work-groups than the API allows
        along a dimension (CUDA: 65535 along y and z), rather than fail halfway through."""
        limits = backend.max_groups
        if limits is None:
            return
        for launch in self.launches:
            for axis, (size, local, most) in enumerate(zip(launch.global_size,
                                                           launch.local_size, limits)):
                groups = -(-size // local)
                if groups > most:
                    raise UsageError(
                        f"this product is too large for the {backend.name} backend: the "
                        f"{launch.what} kernel would need {groups} work-groups along dimension "
                        f"{axis}, and {backend.name} allows at most {most}")

    def run(self, order: LaunchOrder, a: Any, b: Any, c: Any) -> None:
        """Queue every launch on the call's buffers, without waiting. The launches are
        prepared by the backend on the first run, so a repeated call only hands each one its
        buffers."""
        bound: dict[str | int, Any] = {"a": a, "b": b, "c": c}
        for i, count in enumerate(self.scratch):
            bound[i] = order.scratch(count)
        ready = self.ready
        if ready is None:
            ready = self.ready = [
                order.backend.prepare(launch.kernel, launch.global_size, launch.local_size,
                                      launch.args, [i for i, _ in slots])
                for launch, slots in zip(self.launches, self.slots)]
        for launch, slots in zip(ready, self.slots):
            order.run(launch, [bound[slot.name] for _, slot in slots])


def _pack(backend: Backend, prog: CallProgram, what: str, src: Slot, x: Mat, rows: int,
          cols: int, out_rows: int, out_cols: int, transpose: bool) -> Slot:
    """op(stored) zero-padded to out_rows x out_cols, in a tight column-major scratch buffer."""
    out = prog.new_scratch(out_rows * out_cols)
    name = "pack_transpose" if transpose else "pack_copy"
    prog.add(what, helper_kernel(backend, name),
             *tiles_geometry(backend, name, out_rows, out_cols),
             [rows, cols, out_rows, out_cols, src, x.offset, x.ld, out])
    return out


def _pack_panel_pair(backend: Backend, prog: CallProgram, steps: list[tuple[Any, int]],
                     a: tuple[Slot, Mat], b: tuple[Slot, Mat]) -> tuple[Slot, Slot]:
    """op(A) and op(B)^T zero-padded to the plan's sizes, straight into the panels of the
    rung's own packing steps (`steps`, whose panel heights it keeps), in one launch
    (`panel_pair_launch`)."""
    plan = prog.plan
    (sa, xa), (sb, xb) = a, b
    panel_a, panel_b = (helper.macros["PANEL"] for helper, _ in steps)
    out_a, out_b = prog.new_scratch(plan.mp * plan.kp), prog.new_scratch(plan.np_ * plan.kp)
    # BT = op(B)^T is B read transposed where B is not, and as it lies where it is
    pack = panel_pair_launch(backend, (panel_a, panel_b), (plan.m, plan.n, plan.k),
                             (plan.mp, plan.np_, plan.kp), (sa, xa.offset, xa.ld, xa.trans),
                             (sb, xb.offset, xb.ld, not xb.trans), (out_a, out_b))
    prog.add(pack.what, pack.kernel, pack.global_size, pack.local_size, pack.args)
    return out_a, out_b


def _unshared(backend: Backend, prog: CallProgram, alias: tuple[bool, bool], a: Mat,
              b: Mat) -> tuple[tuple[Slot, Mat], tuple[Slot, Mat]]:
    """A and B as the launches that write C may read them: tight copies of those that share
    memory with C and would be read in place (`copies`), the others where they lie."""
    plan = prog.plan
    out = []
    for name, slot, x, (rows, cols) in (("a", A, a, (plan.m, plan.k)),
                                        ("b", B, b, (plan.k, plan.n))):
        if name in copies(plan, alias):
            sr, sc = stored(x, rows, cols)
            slot = _pack(backend, prog, f"copy of {name.upper()}", slot, x, sr, sc, sr, sc,
                         False)
            x = Mat(None, 0, max(1, sr), x.trans)
        out.append((slot, x))
    return out[0], out[1]


def _direct(backend: Backend, prog: CallProgram, a: Mat, b: Mat, c: Mat,
            alias: tuple[bool, bool]) -> None:
    """One launch reads the operands where they lie and writes alpha*P + beta*C itself (the
    direct kernel, or the skinny one)."""
    plan = prog.plan
    if plan.chosen.rung == SKINNY.number:
        _skinny(backend, prog, a, b, c, alias)
        return
    if plan.split > 1:
        _split(backend, prog, a, b, c, alias)
        return
    knl = backend.program(DIRECT.file, direct_macros(plan.chosen.params, a.trans, b.trans),
                          DIRECT.kernel)
    (sa, a), (sb, b) = _unshared(backend, prog, alias, a, b)
    prog.add("direct kernel", knl, *direct_geometry(plan.chosen.params, plan.m, plan.n),
             [plan.m, plan.n, plan.k, plan.alpha, plan.beta, sa, a.offset, a.ld,
              sb, b.offset, b.ld, C, c.offset, c.ld])


def _skinny(backend: Backend, prog: CallProgram, a: Mat, b: Mat, c: Mat,
            alias: tuple[bool, bool]) -> None:
    """One launch of the skinny kernel, which reads the operands where they lie and writes
    alpha*P + beta*C itself."""
    plan = prog.plan
    m, n, split = plan.m, plan.n, plan.split
    knl = backend.program(SKINNY.file, skinny_macros(plan.chosen.params, batched=split > 1),
                          SKINNY.kernel)
    (sa, a), (sb, b) = _unshared(backend, prog, alias, a, b)
    if split == 1:
        prog.add("skinny kernel", knl, *SKINNY.geometry(plan.chosen.params, m, n),
                 skinny_launch(m, n, plan.k, plan.alpha, plan.beta, sa, a.offset, a.ld,
                               a.trans, sb, b.offset, b.ld, b.trans, C, c.offset, c.ld))
        return
    # K in slices (the configuration's SPLIT): slice z of op(A)'s columns times slice z of
    # op(B)'s rows into partial product z, which `reduce_splits` sums into alpha*P + beta*C.
    depth = plan.k // split
    partial = prog.new_scratch(split * m * n)
    along_a = depth if a.trans else depth * a.ld
    along_b = depth * b.ld if b.trans else depth
    prog.add("skinny kernel, K split", knl,
             *skinny_batched_geometry(plan.chosen.params, m, n, split),
             [*skinny_launch(m, n, depth, np.float32(1), np.float32(0), sa, a.offset, a.ld,
                             a.trans, sb, b.offset, b.ld, b.trans, partial, 0, m),
              *slice_strides(m, n, along_a, along_b)])
    _sum_slices(backend, prog, partial, c)


def _split(backend: Backend, prog: CallProgram, a: Mat, b: Mat, c: Mat,
           alias: tuple[bool, bool]) -> None:
    """K split into slices: one launch of the batched direct kernel multiplies slice p of A's
    columns by slice p of B's rows into partial product p, and `reduce_splits` sums them into
    alpha*P + beta*C. The slices are views: one stride apart along K in each operand."""
    plan = prog.plan
    m, n, split = plan.m, plan.n, plan.split
    depth = plan.k // split
    knl = backend.program(DIRECT.file, direct_macros(plan.chosen.params, a.trans, b.trans,
                                                     batched=True), DIRECT.kernel)
    (sa, a), (sb, b) = _unshared(backend, prog, alias, a, b)
    partial = prog.new_scratch(split * m * n)
    strides = [depth if a.trans else depth * a.ld, depth * b.ld if b.trans else depth, m * n]
    prog.add("direct kernel, K split", knl,
             *batched_geometry(plan.chosen.params, m, n, split),
             [m, n, depth, np.float32(1), np.float32(0), sa, a.offset, a.ld, sb, b.offset, b.ld,
              partial, 0, m, *strides])
    _sum_slices(backend, prog, partial, c)


def _sum_slices(backend: Backend, prog: CallProgram, partial: Slot, c: Mat) -> None:
    """`reduce_splits`: the plan's partial products (one after another, each of the size the
    kernel ran, padded or not) summed into alpha*P + beta*C, whichever kernel made them."""
    plan = prog.plan
    total = sum_of_slices(backend, plan.m, plan.n, plan.split, partial, C, plan.alpha,
                          plan.beta, c.offset, c.ld, (plan.mp, plan.np_))
    prog.add(total.what, total.kernel, total.global_size, total.local_size, total.args)


def _packed(backend: Backend, prog: CallProgram, a: Mat, b: Mat, c: Mat,
            alias: tuple[bool, bool]) -> Slot:
    """Packs, panel helpers and the rung; returns where the product P lies (C where the rung
    or the sum of its slices wrote C itself)."""
    plan = prog.plan
    m, n, k = plan.m, plan.n, plan.k
    rung = get_rung(plan.chosen.rung)
    # The form that runs, built before anything is queued, so a configuration that fails to
    # build here leaves nothing half done and the next choice can run instead.
    knl = backend.program(rung.file, _main_macros(rung, plan), rung.kernel)
    (sa, a), (sb, b) = _unshared(backend, prog, alias, a, b)
    if plan.panels:
        sa, sb = _pack_panel_pair(backend, prog, panel_steps(plan), (sa, a), (sb, b))
        p = C if plan.direct_c else prog.new_scratch(plan.mp * plan.np_)
        main = prepare(backend, rung, plan.chosen.params, plan.mp, plan.np_, plan.kp, sa, sb,
                       p, [], lambda name, count: prog.new_scratch(count)).main
        prog.add(main.what, main.kernel, main.global_size, main.local_size, main.args)
        return p
    if plan.pack_a:
        sa = _pack(backend, prog, "pack of A", sa, a, m, k, plan.rows_a, plan.kp, a.trans)
    if plan.pack_b:
        if rung.transposed_b:  # the rung reads BT = op(B)^T, N x K
            sb = _pack(backend, prog, "pack of B", sb, b, n, k, plan.rows_bt, plan.kp,
                       not b.trans)
        else:
            sb = _pack(backend, prog, "pack of B", sb, b, k, n, plan.kp, plan.np_, b.trans)
    if plan.split > 1:
        _split_tiled(backend, prog, rung, knl, sa, sb, c)
        return C
    p = C if plan.direct_c else prog.new_scratch(plan.mp * plan.np_)
    if plan.reads_b or plan.padded_ld:  # the form built above; no helper before it
        prog.add("tiled kernel, B as it lies" if plan.reads_b else
                 f"{rung.slug} kernel, columns whole vectors apart", knl,
                 *rung.geometry(plan.chosen.params, plan.mp, plan.np_),
                 rung.args(plan.mp, plan.np_, plan.kp, sa, sb, p))
        return p
    # gemm's own packing did the transpose of B; what remains is packing into panels
    prepared = prepare(backend, rung, plan.chosen.params, plan.mp, plan.np_, plan.kp, sa, sb, p,
                       [h for h, _ in panel_steps(plan)],
                       lambda name, count: prog.new_scratch(count))
    for step in (*prepared.helpers, prepared.main):
        prog.add(step.what, step.kernel, step.global_size, step.local_size, step.args)
    return p


def _main_macros(rung: Any, plan: Plan) -> dict[str, int]:
    """The -D set of the plan's packing kernel: its batched form where K is split, the tiled
    kernel's form reading B as it lies and that of the one for any size reading its operands
    whole vectors apart where the plan has them."""
    params = plan.chosen.params
    if rung.number == TILED.number and (plan.split > 1 or plan.reads_b):
        return tiled_macros(params, plan.split > 1, plan.reads_b)
    return {**rung.macros(params), **({"BATCHED": 1} if plan.split > 1 else {}),
            **({"PADDED_LD": 1} if plan.padded_ld else {})}


def _split_tiled(backend: Backend, prog: CallProgram, rung: Any, knl: Any, sa: Slot, sb: Slot,
                 c: Mat) -> None:
    """K in slices on the tiled kernel or the one for any size: its batched form (`knl`,
    built before anything was queued) multiplies slice p of A's columns by slice p of BT's (or
    B's rows) into partial product p, and `reduce_splits` sums them into alpha*P + beta*C."""
    plan = prog.plan
    m, n, split = plan.mp, plan.np_, plan.split
    depth = rung.slice_depth(plan.chosen.params, plan.kp, split)
    (gx, gy), (lx, ly) = rung.geometry(plan.chosen.params, m, n)
    partial = prog.new_scratch(split * m * n)
    # B as it lies holds a slice as the next `depth` rows of its columns; BT as the next columns
    slice_args = read_b_slice_args if plan.reads_b else rung.slice_args
    prog.add(f"{rung.slug} kernel, K split", knl, (gx, gy, split), (lx, ly, 1),
             slice_args(m, n, plan.kp, depth, sa, sb, partial))
    _sum_slices(backend, prog, partial, c)


def build_program(backend: Backend, plan: Plan, a: Mat, b: Mat, c: Mat,
                  alias: tuple[bool, bool] = (False, False)) -> CallProgram:
    """Every launch of the plan with its kernel built (BuildError before anything is queued).
    The Mats give offsets, leading dimensions and transposes; their buffers are the call's."""
    prog = CallProgram(plan, alias)
    if plan.nothing_to_do:
        return prog
    if plan.direct:
        _direct(backend, prog, a, b, c, alias)
        return prog
    p: Slot = C
    if plan.use_p:
        p = _packed(backend, prog, a, b, c, alias)
        if plan.direct_c or plan.split > 1:
            return prog
    prog.add("epilogue", helper_kernel(backend, "epilogue"),
             *tiles_geometry(backend, "epilogue", plan.m, plan.n),
             [plan.m, plan.n, plan.alpha, p, plan.mp if plan.use_p else plan.m,
              int(plan.use_p), plan.beta, C, c.offset, c.ld, int(plan.read_c)])
    return prog
