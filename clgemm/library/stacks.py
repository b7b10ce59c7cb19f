"""Products of stacks of matrices in one launch, as BLAS's strided-batched GEMM does them.

gemm() and matmul() take arrays of more than two dimensions as NumPy's matmul does: the last
two are the matrices, the others a batch, broadcast against each other (a batch dimension of 1,
or a missing one, repeats that operand). Every product of the stack runs in one launch of a
kernel built with BATCHED: the launch's third dimension counts the products, and each operand
advances by a stride of its own from one product to the next (0 for a repeated one). The
kernel is the tiled one where the products suit it, else the direct one (`stack_launch`).
The batch of a device array must be one stride apart (any C-ordered stack, a slice of one, a
broadcast); NumPy operands are laid out so. The batch is split into several launches only where
the API limits a grid's third dimension (CUDA: 65535).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from clgemm.backends import Backend, DeviceArrays, Mat, Operand
from clgemm.backends.base import strided_operand
from clgemm.core.errors import UsageError
from clgemm.core.memory_fit import INT_MAX, check_memory
from clgemm.library.cache import CACHE
from clgemm.library.hot_stack import HotStack
from clgemm.library.order import LaunchOrder
from clgemm.library.placing import flat_view, upload
from clgemm.library.plan import STACK_ALIGNMENT
from clgemm.library.program import CallProgram, helper_kernel, tiles_geometry
from clgemm.library.stack_launch import run_stack


@dataclass
class Stack:
    """One operand of a stacked product: its matrices as one Operand (the first matrix) and
    the floats from one product's matrix to the next."""

    op: Operand
    stride: int


def batch_shape(a: Any, b: Any, c: Any) -> tuple[int, ...]:
    """The broadcast batch of the operands (C's must be it exactly)."""
    try:
        batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    except ValueError:
        raise UsageError(f"the stacks of a {tuple(a.shape)} and b {tuple(b.shape)} do not "
                         f"broadcast: their batch dimensions {tuple(a.shape[:-2])} and "
                         f"{tuple(b.shape[:-2])} differ where neither is 1") from None
    if c is not None and tuple(c.shape[:-2]) != batch:
        raise UsageError(f"c has shape {tuple(c.shape)}, but the product's batch is {batch}: c "
                         f"must hold every product")
    return batch


def one_stride(name: str, shape: tuple[int, ...], strides: tuple[int, ...],
               batch: tuple[int, ...]) -> int | None:
    """The floats between consecutive products of an operand of batch `shape` (byte
    `strides`) broadcast to `batch`, if one stride describes them all; None if not."""
    shape = (1,) * (len(batch) - len(shape)) + tuple(shape)
    strides = (0,) * (len(batch) - len(strides)) + tuple(strides)
    step, after = None, 1
    for size, st, full in reversed(list(zip(shape, strides, batch))):
        if full > 1:
            effective = st if size == full else 0
            if effective % 4 or effective < 0:
                return None
            if step is None:
                step = effective // 4 // after
                if step * after * 4 != effective:
                    return None
            elif effective != step * after * 4:
                return None
        after *= full
    return step or 0


def _host(name: str, x: np.ndarray, batch: tuple[int, ...]) -> Stack:
    """A NumPy operand laid out for the launch: one matrix where the batch repeats it, else
    every matrix of the broadcast stack one after another, each C-ordered."""
    rows, cols = x.shape[-2:]
    if math.prod(x.shape[:-2]) == 1:
        mat = np.ascontiguousarray(x.reshape(rows, cols))
        return Stack(Operand(name, mat, True, max(1, cols)), 0)
    full = np.ascontiguousarray(np.broadcast_to(x, batch + (rows, cols)), dtype=np.float32)
    return Stack(Operand(name, full, True, max(1, cols)), rows * cols)


def _device(name: str, kind: DeviceArrays, x: Any, batch: tuple[int, ...]) -> Stack:
    if name != "c":
        x = kind.readable(x)
    stride = one_stride(name, tuple(x.shape[:-2]), tuple(x.strides[:-2]), batch)
    if stride is None or stride > INT_MAX:
        raise UsageError(f"{name} is a stack whose matrices are not one stride apart (strides "
                         f"{tuple(x.strides)} bytes): make it contiguous first")
    buf, offset = kind.buffer_of(x)
    shape = SimpleNamespace(shape=tuple(x.shape[-2:]), strides=tuple(x.strides[-2:]))
    return Stack(strided_operand(name, shape, buf, offset, kind.label), stride)


def stack_operand(name: str, kind: DeviceArrays | None, x: Any,
                  batch: tuple[int, ...]) -> Stack:
    return _device(name, kind, x, batch) if kind is not None else _host(name, x, batch)


def _span(s: Stack, mat: Mat, rows: int, cols: int, count: int) -> int:
    """Floats from the first element of the first product to past the last of the last, for
    stored (column-major) matrices of rows x cols."""
    return (count - 1) * s.stride + (cols - 1) * mat.ld + rows


def refuse_overlap(kind: DeviceArrays, stacks: dict[str, Stack], mats: dict[str, Mat],
                   dims: dict[str, tuple[int, int]], count: int,
                   names: dict[str, str]) -> None:
    """A C that shares memory with an operand of a stack is refused: the products run at once,
    so one product's C could be another's A."""
    c = kind.memory_range(mats["c"].buf, mats["c"].offset,
                          _span(stacks["c"], mats["c"], *dims["c"], count))
    for name in "ab":
        x = kind.memory_range(mats[name].buf, mats[name].offset,
                              _span(stacks[name], mats[name], *dims[name], count))
        if x[0] == c[0] and x[1] < c[2] and c[1] < x[2]:
            raise UsageError(f"c shares memory with {names[name]}: for a stack, give a c of its "
                             f"own")


def check_stack_memory(be: Backend, stacks: dict[str, Stack], uploads: list[str],
                       new_c: int) -> None:
    need = [(f"{name} (uploaded)", stacks[name].op.array.size) for name in uploads]
    if new_c:
        need.append(("the result", new_c))
    check_memory(be.device, need)


@dataclass(frozen=True)
class CheckedCall:
    """A call whose arguments passed every check: the backend, the device kind of the arrays
    on a device (None: NumPy only), each array's kind, the sizes of one product, the scalars.
    The two-dimensional call and the stacked one start from it alike."""

    be: Backend
    kind: DeviceArrays | None
    kinds: dict[str, DeviceArrays | None]
    m: int
    n: int
    k: int
    alpha: np.float32
    beta: np.float32


def gemm_stacks(call: CheckedCall, a: Any, b: Any, c: Any, trans_a: bool, trans_b: bool,
                waits: list[Any], key: Any = None) -> Any:
    """C := alpha op(A) op(B) + beta C for every product of the stacks; returns C. With `key`,
    the call is remembered as a HotStack for the next one of its signature."""
    be, m, n, k = call.be, call.m, call.n, call.k
    batch = batch_shape(a, b, c)
    count = math.prod(batch)
    kind = call.kind
    named = [(name, x) for name, x in (("a", a), ("b", b), ("c", c))
             if x is not None and call.kinds.get(name) is not None]
    out_kind = call.kinds.get("c") if c is not None else kind
    reads_ab = k > 0 and call.alpha != 0
    if count == 0 or m == 0 or n == 0 or (not reads_ab and call.beta == 1):
        return c if c is not None else _new(be, out_kind, named, batch + (m, n))
    if not reads_ab:
        return _scaled(call, c, out_kind, named, batch + (m, n), waits)
    stacks = {name: stack_operand(name, call.kinds[name], x, batch)
              for name, x in (("a", a), ("b", b)) if reads_ab}
    result = c
    if c is None and out_kind is None:  # a new NumPy C: where a CPU writes it in place
        result = np.empty(batch + (m, n), np.float32)
        stacks["c"] = Stack(Operand("c", result, True, max(1, n)), m * n)
    elif c is None or call.kinds.get("c") is None:  # a new C, or NumPy's C: C-ordered on device
        host_c = (None if c is None else c if flat_view(c, "C") is not None
                  else np.ascontiguousarray(np.broadcast_to(c, batch + (m, n))))
        stacks["c"] = Stack(Operand("c", host_c, True, max(1, n)), m * n)
    else:
        stacks["c"] = stack_operand("c", call.kinds["c"], c, batch)
    check_stack_memory(be, stacks, [x for x in stacks if call.kinds.get(x) is None
                                    and x != "c"], m * n * count if out_kind is None or c is None
                       else 0)
    queue = kind.queue_for(be, named) if kind is not None else getattr(be, "queue", None)
    if kind is not None:
        for _, x in named:
            waits += kind.events(x)
    order = LaunchOrder(be, queue, waits)
    if result is None and out_kind is not None:
        order.pooled()
        result = out_kind.empty(be, named, batch + (m, n))
        buf, offset = out_kind.buffer_of(result)
        stacks["c"].op.buf, stacks["c"].op.offset = buf, offset
    # the kernel is chosen after the upload: the operands start where any of them reads vectors
    in_place = upload(be, order, [s.op for s in stacks.values()], stacks["c"].op,
                      call.beta != 0, count * m * n, {"a": STACK_ALIGNMENT, "b": STACK_ALIGNMENT})
    program, refuse = _launch(call, order, stacks, trans_a, trans_b, count,
                              kind if c is not None and call.kinds.get("c") is not None
                              else None)
    if key is not None and program is not None and kind is not None:
        _remember_hot_stack(key, call, kind, named, program, refuse, stacks["c"].op.c_order,
                            c is not None, batch + (m, n))
    return _finish(be, queue, out_kind, result, stacks["c"], c, batch + (m, n), order,
                   in_place)


def _remember_hot_stack(key: Any, call: CheckedCall, kind: DeviceArrays,
                        named: list[tuple[str, Any]], program: CallProgram,
                        refuse: Callable[..., None] | None, swap: bool, c_given: bool,
                        shape: tuple[int, ...]) -> None:
    """The stacked call as a HotStack for the next of its signature (which has every array on
    the device), where they are all on one in-order queue."""
    be = call.be
    steady, queue = kind.steady_queue(be, named)
    if not steady or not be.in_order(queue):
        return
    CACHE.remembered(CACHE.hot, key, lambda: HotStack(
        be, kind, program, ("b", "a", "c") if swap else ("a", "b", "c"), c_given, shape, queue,
        refuse))


def _scaled(call: CheckedCall, c: Any, out_kind: DeviceArrays | None,
            named: list[tuple[str, Any]], shape: tuple[int, ...], waits: list[Any]) -> Any:
    """No product (alpha or K is 0): C := beta C, A and B unread. NumPy's C is scaled where it
    lies; a device C by the epilogue kernel, one launch per product (the direct kernel is not
    launched with K = 0: PoCL 3.1 scales part of C twice there)."""
    be = call.be
    if out_kind is None:
        result = np.zeros(shape, np.float32) if c is None else c
        if c is not None and call.beta == 0:  # C is not read: NaN there does not propagate
            c[...] = 0
        elif c is not None:
            np.multiply(c, np.float32(call.beta), out=c, casting="unsafe")
        return result
    kind = out_kind
    queue = kind.queue_for(be, named)
    order = LaunchOrder(be, queue, waits + [e for _, x in named for e in kind.events(x)])
    result = c
    if c is None:
        order.pooled()
        result = out_kind.empty(be, named, shape)
    s = stack_operand("c", out_kind, result, shape[:-2])
    rows, cols = (shape[-1], shape[-2]) if s.op.c_order else (shape[-2], shape[-1])
    scale_products(be, order, s.op.mat(False), rows, cols, call.beta, s.stride,
                   math.prod(shape[:-2]))
    out_kind.replace_events(result, order.last)
    return result


def scale_products(be: Backend, order: LaunchOrder, c: Mat, rows: int, cols: int,
                   beta: np.float32, stride: int, count: int) -> None:
    """C := beta C for each of `count` column-major rows x cols matrices `stride` floats apart
    (no product: alpha or K is 0), one launch of the epilogue each; with beta 0, C is not
    read."""
    knl = helper_kernel(be, "epilogue")
    gsize, lsize = tiles_geometry(be, "epilogue", rows, cols)
    with be.lock:
        for p in range(count):
            order.enqueue(knl, gsize, lsize, [rows, cols, np.float32(0), c.buf, rows, 0, beta,
                                              c.buf, c.offset + p * stride, c.ld, int(beta != 0)])


def _new(be: Backend, kind: DeviceArrays | None, named: list[tuple[str, Any]],
         shape: tuple[int, ...]) -> Any:
    if kind is None:
        return np.empty(shape, np.float32)
    return kind.empty(be, named, shape)


def _launch(call: CheckedCall, order: LaunchOrder, stacks: dict[str, Stack], trans_a: bool,
            trans_b: bool, count: int,
            alias_kind: DeviceArrays | None
            ) -> tuple[CallProgram | None, Callable[..., None] | None]:
    """The kernel sees column-major matrices: a C-ordered C is C^T = op(B)^T op(A)^T, so the
    operands swap as in the two-dimensional call. The stack runs on the tiled kernel where it
    suits it (`stack_tiled`), else on the direct kernel (`launch_stack`). Returns what was
    queued as a program (None where the direct kernel took several launches) and the check
    that refuses an overlapping C, for a repeated call."""
    m, n, k = call.m, call.n, call.k
    c = stacks["c"].op.mat(False)
    if stacks["c"].op.c_order:
        a, b = stacks["b"].op.mat(not trans_b), stacks["a"].op.mat(not trans_a)
        strides = (stacks["b"].stride, stacks["a"].stride, stacks["c"].stride)
        m, n = n, m
    else:
        a, b = stacks["a"].op.mat(trans_a), stacks["b"].op.mat(trans_b)
        strides = (stacks["a"].stride, stacks["b"].stride, stacks["c"].stride)
    refuse = None
    if alias_kind is not None:
        refuse = _refusal(alias_kind, dict(zip("abc", strides)), (a, b, c),
                          {"a": (k, m) if a.trans else (m, k),
                           "b": (n, k) if b.trans else (k, n), "c": (m, n)}, count,
                          {"a": "b", "b": "a"} if stacks["c"].op.c_order
                          else {"a": "a", "b": "b"})
        refuse(a.buf, b.buf, c.buf)
    program = run_stack(call.be, order, (m, n, k), (call.alpha, call.beta), (a, b, c), strides,
                        count)
    return program, refuse


def _refusal(kind: DeviceArrays, strides: dict[str, int], mats: tuple[Mat, Mat, Mat],
             dims: dict[str, tuple[int, int]], count: int,
             names: dict[str, str]) -> Callable[..., None]:
    """`refuse_overlap` for the kernel's A, B and C buffers of any call of this signature:
    the offsets, leading dimensions and strides are the signature's, the buffers the call's
    (nothing of this call's arrays is kept)."""
    layout = [(x.offset, x.ld, x.trans) for x in mats]
    stacks = {name: Stack(Operand(name, None, False, 1), stride)
              for name, stride in strides.items()}

    def refuse(a: Any, b: Any, c: Any) -> None:
        now = {name: Mat(buf, *where) for name, buf, where in zip("abc", (a, b, c), layout)}
        refuse_overlap(kind, stacks, now, dims, count, names)
    return refuse


def _finish(be: Backend, queue: Any, out_kind: DeviceArrays | None, result: Any, c_stack: Stack,
            c: Any, shape: tuple[int, ...], order: LaunchOrder,
            in_place: np.ndarray | None = None) -> Any:
    if out_kind is not None:
        out_kind.replace_events(result, order.last)
        return result
    if queue is not None and queue is not getattr(be, "queue", None):
        queue.finish()
    if in_place is not None:  # written where it lies (a CPU)
        be.sync_host(c_stack.op.buf, in_place)
        if c is not None and not np.may_share_memory(c, in_place):  # C's C-ordered copy
            c[...] = in_place.reshape(shape)
        return result
    flat = be.to_host(c_stack.op.buf, math.prod(shape))
    if c is None:
        return flat.reshape(shape)
    c[...] = flat.reshape(shape)
    return c


def buffer_strides(kind: DeviceArrays, bufs: dict[str, Any], mats: tuple[Mat, Mat, Mat],
                   sizes: tuple[int, int, int], swapped: bool, given: dict[str, int | None],
                   count: int) -> tuple[int, int, int]:
    """gemm_buffers_batched's strides, checked (the defaults: each stored matrix's extent),
    in the kernel's order of operands (B's and A's swapped for row-major order)."""
    m, n, k = sizes
    a, b, c = mats
    stored = {"a": (k, m) if a.trans else (m, k), "b": (n, k) if b.trans else (k, n),
              "c": (m, n)}
    names = {"a": "b", "b": "a", "c": "c"} if swapped else {"a": "a", "b": "b", "c": "c"}
    out = []
    for name, mat in zip("abc", mats):
        rows, cols = stored[name]
        user = names[name]
        value = given[user]
        stride = (cols * mat.ld if cols else 0) if value is None else value
        if isinstance(stride, bool) or not isinstance(stride, int) or not 0 <= stride <= INT_MAX:
            raise UsageError(f"stride_{user}={value!r} must be an integer from 0 to {INT_MAX}")
        if count and rows and cols:
            need = mat.offset + (count - 1) * stride + (cols - 1) * mat.ld + rows
            if need > kind.floats(bufs[user]):
                raise UsageError(f"buffer {user} holds {kind.floats(bufs[user])} floats, but "
                                 f"{count} matrices {stride} floats apart reach float {need}")
        out.append(stride)
    return out[0], out[1], out[2]


def buffers_stack(be: Backend, order: LaunchOrder, kind: DeviceArrays,
                  mats: tuple[Mat, Mat, Mat], sizes: tuple[int, int, int], alpha: np.float32,
                  beta: np.float32, strides: tuple[int, int, int], count: int) -> None:
    """Queue gemm_buffers_batched's products: one launch (or a few, where a grid is limited; on
    the tiled kernel a pack of every B first where that is needed, as for gemm()'s stacks), or
    where there is no product (alpha or K is 0) the epilogue on each C."""
    m, n, k = sizes
    a, b, c = mats
    if count == 0 or m == 0 or n == 0 or ((k == 0 or alpha == 0) and beta == 1):
        return
    if k == 0 or alpha == 0:
        scale_products(be, order, c, m, n, beta, strides[2], count)
        return
    stack = {name: Stack(Operand(name, None, False, x.ld, x.offset, x.buf), s)
             for name, x, s in zip("abc", mats, strides)}
    refuse_overlap(kind, stack, {"a": a, "b": b, "c": c},
                   {"a": (k, m) if a.trans else (m, k), "b": (n, k) if b.trans else (k, n),
                    "c": (m, n)}, count, {"a": "a", "b": "b"})
    run_stack(be, order, sizes, (alpha, beta), mats, strides, count)
