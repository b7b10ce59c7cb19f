"""Operands where the kernels can read them: host operands onto the device, shared by the
two-dimensional call and the stacked one (a device that works in host memory, a CPU, takes the
NumPy arrays themselves, any other copies), and the caller's buffers that a CPU reads at a host
address of the caller's (`readable_buffers`)."""

from __future__ import annotations

from typing import Any, Literal, Mapping

import numpy as np

from clgemm.backends import Backend, Mat, Operand
from clgemm.library.order import LaunchOrder
from clgemm.library.plan import STACK_ALIGNMENT, in_place_alignment, stored
from clgemm.library.program import CallProgram


def upload(be: Backend, order: LaunchOrder, ops: list[Operand], c_op: Operand, read_c: bool,
           c_floats: int, align: Mapping[str, int]) -> np.ndarray | None:
    """Host operands onto the device: where the device works in host memory (a CPU) the
    buffers are the arrays themselves, else copies; a C that is not read is written in place
    there (returned: the array to sync afterwards), else into a scratch buffer. C is never
    the host's own memory where it shares memory with A or B, which are read as it is
    written. An operand named in `align` is read where it lies only if it starts on that many
    bytes (`plan.in_place_alignment`); else it is copied, and the copy starts on the device's
    own alignment."""
    in_place = None
    for op in ops:
        if op.buf is not None:
            continue
        layout: Literal["C", "F"] = "C" if op.c_order else "F"
        if op is c_op and not read_c:
            flat = flat_view(op.array, layout)
            shared = any(o is not c_op and isinstance(o.array, np.ndarray)
                         and np.may_share_memory(o.array, op.array) for o in ops)
            buf = None if flat is None or shared else be.host_buffer(flat, writable=True)
            op.buf = buf if buf is not None else order.scratch(c_floats)
            in_place = flat if buf is not None else None
            continue
        host = np.asarray(op.array, order=layout).reshape(-1, order=layout)
        if op is not c_op:
            op.buf = be.host_buffer(host, writable=False, align=align.get(op.name, 4))
        if op.buf is None:
            op.buf = be.to_device(host)
    return in_place


def flat_view(x: Any, layout: str) -> np.ndarray | None:
    """The array as one run of floats in `layout`, without a copy; None where it is not one."""
    if not isinstance(x, np.ndarray) or not x.flags.writeable:
        return None
    if (layout == "C" and x.flags.c_contiguous) or (layout == "F" and x.flags.f_contiguous):
        flat = x.reshape(-1, order=layout)  # type: ignore[call-overload]
        return flat if np.shares_memory(flat, x) else None
    return None


def readable_buffers(be: Backend, order: LaunchOrder, program: CallProgram,
                     mats: tuple[Mat, Mat]) -> tuple[tuple[Mat, Mat], dict[str, int]]:
    """The caller's buffers A and B as the program may read them: one that the program reads
    where it lies (offset 0, columns tight) at a host address of the caller's that is off its
    vectors (`Backend.host_address`, `plan.in_place_alignment`) is copied first into a buffer
    the driver places, since the vector loads fault there on a CPU. Also the bytes each starts
    on as placed, by name, which another program's reads must fit (as `upload`'s `align`)."""
    plan = program.plan
    sizes = ((plan.m, plan.k), (plan.k, plan.n))
    placed, out = [], []
    for x, (rows, cols), need in zip(mats, sizes, in_place_alignment(plan)):
        address = be.host_address(x.buf)
        start = None if address is None else address + 4 * x.offset
        sr, sc = stored(x, rows, cols)
        in_place = x.offset == 0 and x.ld == max(1, sr)
        if start is not None and need > 4 and start % need and in_place:
            copy = order.scratch(sr * sc)
            order.copy(copy, x.buf, 4 * sr * sc)
            x, start = Mat(copy, 0, x.ld, x.trans), None
        placed.append(min(STACK_ALIGNMENT, start & -start) if start else STACK_ALIGNMENT)
        out.append(x)
    return (out[0], out[1]), {"a": placed[0], "b": placed[1]}
