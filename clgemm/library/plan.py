"""What a call runs and what it allocates, decided from its sizes, scalars, layouts and kernel
before anything is allocated; and which operands share memory with C.

A plan depends only on what a call's signature fixes (never on the buffers), so the library
keeps one per signature (`clgemm.library.cache`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from clgemm.backends import DeviceArrays, Mat
from clgemm.configs.configuration import Config
from clgemm.core.errors import UsageError
from clgemm.core.memory_fit import INT_MAX
from clgemm.rungs import get_rung
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.skinny import SKINNY
from clgemm.rungs.tiled import TILED, reads_b_itself
from clgemm.rungs.tiled_any import TILED_ANY, padded_rows


@dataclass
class Plan:
    m: int
    n: int
    k: int
    alpha: np.float32
    beta: np.float32
    choice: Config | None = None
    mp: int = 0
    np_: int = 0
    kp: int = 0
    #: A, B rewritten before the rung reads them (packed, or packed into panels)
    pack_a: bool = False
    pack_b: bool = False
    #: the rung reads A and BT in panels, each packed in one pass from the caller's layout
    panels: bool = False
    #: the tiled kernel reads B (K x N) where it lies, transposing it tile by tile (BT_FROM_B)
    reads_b: bool = False
    #: the tiled kernel for any size reads A and BT with their columns whole vectors apart
    #: (PADDED_LD): as they lie on its vector width, each packed so where its rows are off it
    padded_ld: bool = False
    #: the rung writes straight into C (no P buffer, no epilogue)
    direct_c: bool = False
    #: the direct or the skinny kernel does the whole product in one launch (no packing, no
    #: epilogue)
    direct: bool = False
    #: slices K is split into by the direct, the skinny or a tiled kernel (1: none)
    split: int = 1
    #: buffers the plan allocates besides the caller's: (name, float count)
    temps: list[tuple[str, int]] = field(default_factory=list)

    @property
    def chosen(self) -> Config:
        """The configuration of a plan that computes a product (`use_p`), which `new_plan`
        chooses for every such plan before anything reads it."""
        assert self.choice is not None, "a plan with a product to compute has a configuration"
        return self.choice

    @property
    def rows_a(self) -> int:
        """How far apart the columns of the A the rung reads lie (its rows, padded or not)."""
        return _whole_vectors(self, self.mp)

    @property
    def rows_bt(self) -> int:
        """Likewise for the B operand the rung reads (BT for the kernel for any size)."""
        return _whole_vectors(self, self.np_)

    @property
    def use_p(self) -> bool:
        return self.k > 0 and self.alpha != 0

    @property
    def read_c(self) -> bool:
        return self.beta != 0

    @property
    def nothing_to_do(self) -> bool:
        return self.m == 0 or self.n == 0 or (not self.use_p and self.beta == 1)


def _whole_vectors(plan: Plan, rows: int) -> int:
    return padded_rows(plan.chosen.params, rows) if plan.padded_ld else rows


def panel_steps(plan: Plan) -> list[tuple[Any, int]]:
    """The helper steps the chosen configuration adds after gemm's own packing (panels), each
    with the rows of the operand it rewrites: A is mp x kp, BT np x kp."""
    rung = get_rung(plan.chosen.rung)
    extra = rung.extra_helpers(plan.chosen.params) if rung.extra_helpers else ()
    return [(h, plan.mp if h.operand == "A" else plan.np_) for h in extra]


def new_plan(m: int, n: int, k: int, alpha: np.float32, beta: np.float32, a: Mat, b: Mat,
             c: Mat, kernel: Config | None, split: int = 1, read_b: bool = False,
             pads: Callable[[Sequence[int]], bool] | None = None) -> Plan:
    """The plan of one call with `kernel` (None only where there is no product to compute);
    the direct, the skinny or a tiled kernel splits K into `split` slices where that is more
    than 1; with `read_b` the tiled kernel reads a B it would pack where it lies, if it can;
    `pads` says, given the rows of the operands that would be packed for that alone, whether
    the kernel for any size should read them whole vectors apart (`_plan_padding`)."""
    plan = Plan(m, n, k, alpha, beta)
    if plan.nothing_to_do or not plan.use_p:
        return plan
    assert kernel is not None, "a call with a product to compute has a kernel"
    plan.choice = kernel
    if plan.choice.rung in (DIRECT.number, SKINNY.number):
        # One launch of the direct or the skinny kernel reads the operands where they lie and
        # writes alpha*P + beta*C itself; with K split, it writes the slices' partial products
        # and one more launch sums them into C.
        plan.direct, plan.direct_c = True, True
        plan.mp, plan.np_, plan.kp = m, n, k
        if split > 1:
            plan.split = split
            plan.temps.append(("partial products", split * m * n))
        return plan
    rung = get_rung(plan.choice.rung)
    plan.mp, plan.np_, plan.kp = rung.padded_shape(plan.choice.params, m, n, k)
    exact = (plan.mp, plan.np_, plan.kp) == (m, n, k)
    # A rung that reads panels has both operands packed straight from the caller's layout into
    # them, in one pass each, so no pack of its own comes before. Otherwise an operand is packed
    # where its own sizes are padded or its layout is not the rung's: padding N alone leaves A
    # as it lies (the padded product's extra columns are never read from it).
    plan.panels = bool(panel_steps(plan))
    plan.pack_a = plan.panels or not ((plan.mp, plan.kp) == (m, k) and not a.trans
                                      and a.offset == 0 and a.ld == m)
    _plan_b(plan, b, read_b)
    _plan_padding(plan, pads)
    # The rung writes C itself where C is exactly its output; an operand that shares memory
    # with C and would be read in place is copied first (`copies`), as for the direct kernel.
    plan.direct_c = exact and alpha == 1 and beta == 0 and c.offset == 0 and c.ld == m
    if split > 1:
        # The tiled kernel's batched form (or that of the one for any size) multiplies the
        # slices into partial products at once, each of the padded size; one more launch sums
        # their first M x N into alpha*P + beta*C.
        plan.split, plan.direct_c = split, False
    if plan.pack_a and not plan.panels:
        plan.temps.append(("packed A", plan.rows_a * plan.kp))
    if plan.pack_b and not plan.panels:
        plan.temps.append(("packed B", plan.kp * plan.rows_bt))
    for helper, rows in panel_steps(plan):
        plan.temps.append((helper.name, rows * plan.kp))
    if plan.split > 1:
        plan.temps.append(("partial products", split * plan.mp * plan.np_))
    elif not plan.direct_c:
        plan.temps.append(("product", plan.mp * plan.np_))
    for name, count in plan.temps:
        if count > INT_MAX:
            raise UsageError(f"the {name} would hold {count} floats (M={m} N={n} K={k}); the "
                             f"kernels index with 32-bit ints, so at most {INT_MAX}")
    return plan


def _plan_padding(plan: Plan, pads: Callable[[Sequence[int]], bool] | None) -> None:
    """Whether the tiled kernel for any size reads A and BT with their columns whole vectors
    apart (PADDED_LD). On its vector width they lie so already, and the kernel built so drops
    its float-by-float path. Off the width it reads such an operand float by float; packed with
    its columns rounded up to whole vectors, it reads vectors. An operand packed anyway is
    packed so for nothing; one read in place is packed for it only where `pads` says the pack
    costs less than the floats' reads."""
    if pads is None or plan.chosen.rung != TILED_ANY.number:
        return
    off_a, off_b = (padded_rows(plan.chosen.params, rows) != rows for rows in (plan.mp, plan.np_))
    extra = ([plan.mp] if off_a and not plan.pack_a else []) + (
        [plan.np_] if off_b and not plan.pack_b else [])
    if not extra or pads(extra):
        plan.padded_ld = True
        plan.pack_a, plan.pack_b = plan.pack_a or off_a, plan.pack_b or off_b


def _plan_b(plan: Plan, b: Mat, read_b: bool) -> None:
    """Whether B is packed before the rung reads it (its own sizes padded, or its layout not
    the rung's), or (`read_b`, where the tiled kernel can) read where it lies instead of a
    packed BT."""
    rung, n, k = get_rung(plan.chosen.rung), plan.n, plan.k
    whole = (plan.np_, plan.kp) == (n, k) and b.offset == 0
    if plan.panels:
        plan.pack_b = True
    elif rung.transposed_b:  # the rung reads BT = op(B)^T, N x K
        plan.pack_b = not (whole and b.trans and b.ld == n)
        if (plan.pack_b and read_b and whole and not b.trans and b.ld == k
                and rung.number == TILED.number and reads_b_itself(plan.chosen.params)):
            plan.pack_b, plan.reads_b = False, True
    else:
        plan.pack_b = not (whole and not b.trans and b.ld == k)


def stored(x: Mat, rows: int, cols: int) -> tuple[int, int]:
    """The stored matrix's rows and columns, for op(X) of rows x cols."""
    return (cols, rows) if x.trans else (rows, cols)


def reads_while_writing_c(plan: Plan, operand: str) -> bool:
    """Whether a launch of the plan reads the operand where it lies while it writes C: the
    direct kernel, or a rung that writes C itself from an operand that was not packed. Every
    other plan reads the operands (or packed copies) in launches that end before the epilogue,
    the only launch that writes C, begins."""
    if plan.direct:
        return True
    return plan.direct_c and not (plan.pack_a if operand == "a" else plan.pack_b)


def copies(plan: Plan, alias: tuple[bool, bool]) -> list[str]:
    """The operands the plan must copy before C is written: those that share memory with C
    (`alias`, for A and B) and that a C-writing launch would read in place."""
    if not plan.use_p:
        return []
    return [name for name, shared in zip("ab", alias)
            if shared and reads_while_writing_c(plan, name)]


def shares_memory(kind: DeviceArrays, x: Mat, rows: int, cols: int, c: Mat, m: int,
                   n: int) -> bool:
    """Whether the stored matrix X (rows x cols) and C (m x n) have a float in common.

    Blocked algorithms pass views of one matrix (an LU update reads two blocks and writes a
    third), whose spans interleave without sharing an element: with one leading dimension the
    test is exact, so those calls are not slowed by a copy. Column j of X holds the floats
    [j*ld, j*ld + rows) past X's first, column j' of C [d + j'*ld, d + j'*ld + m), d being C's
    distance from X; two columns meet where t = j - j' has d - rows < t*ld < d + m. With two
    leading dimensions, spans that meet count as shared."""
    if x.buf is None or c.buf is None or not (rows and cols and m and n):
        return False
    mem_x, x0, x1 = kind.memory_range(x.buf, x.offset, (cols - 1) * x.ld + rows)
    mem_c, c0, c1 = kind.memory_range(c.buf, c.offset, (n - 1) * c.ld + m)
    if mem_x != mem_c or x1 <= c0 or c1 <= x0:
        return False
    if x.ld != c.ld or (c0 - x0) % 4:
        return True
    ld, d = x.ld, (c0 - x0) // 4
    t = max((d - rows) // ld + 1, -(n - 1))
    return t <= cols - 1 and t * ld < d + m


def aliases(kind: DeviceArrays | None, a: Mat, b: Mat, c: Mat, m: int, n: int,
             k: int) -> tuple[bool, bool]:
    """Whether A and whether B share memory with C (op(A) m x k, op(B) k x n, C m x n)."""
    if kind is None:
        return False, False
    return (shares_memory(kind, a, *stored(a, m, k), c, m, n),
            shares_memory(kind, b, *stored(b, k, n), c, m, n))


#: the bytes a stack's A and B must start on to be read where they lie, whichever of the
#: stack's kernels runs: the widest vector the tiled kernel reads (`in_place_alignment`)
STACK_ALIGNMENT = 4 * max(next(p for p in TILED.params if p.name == "WIDTH").candidates)


def in_place_alignment(plan: Plan) -> tuple[int, int]:
    """The bytes the plan's A and B must each start on to be read where they lie. The tiled
    kernels read an operand they do not get packed in vectors of WIDTH floats through vector
    pointers, which a compiler may turn into aligned loads; on a CPU, where the operand is the
    caller's array, those fault at an address off the vector (a NumPy array starts on 16 bytes,
    a large one seldom on 32). A packed operand is read float by float by its packing."""
    if not plan.use_p or plan.direct or plan.chosen.rung not in (TILED.number,
                                                                 TILED_ANY.number):
        return 4, 4
    width = 4 * plan.chosen.record.resolve(dict(plan.chosen.params))["WIDTH"]
    return (4 if plan.pack_a else width), (4 if plan.pack_b else width)
