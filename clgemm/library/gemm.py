"""`gemm` and `gemm_buffers`: the ladder as a BLAS-style SGEMM, C := alpha*op(A)*op(B) + beta*C.

The rungs only multiply tightly packed, column-major operands whose sizes suit their tiles. This
module puts the rest of BLAS around them, on the device: pack kernels
(`clgemm/kernels/blas_helpers.cl`) read the caller's matrices through offsets, leading dimensions
and transposes into the layout the chosen rung reads (padding with zeros where its tiles need
whole multiples), the rung multiplies, and an epilogue kernel writes alpha*P + beta*C into the
caller's C. NumPy arrays
travel through the device and back; device arrays and buffers (pyopencl on OpenCL, CuPy on CUDA,
each through its adapter in `arrays.py`) stay where they are. Everything here speaks to the
backend interface, so the same code runs on either backend, with the same checks.

The BLAS special cases are kept as reference BLAS has them: when beta == 0, C is not read (NaN
there does not propagate); when alpha == 0 or K == 0 there is no product, and A and B are not
read; when additionally beta == 1 nothing happens at all. Everything that can be checked is
checked before the first launch, so a mistake never leaves C half written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from clgemm.backends import (Backend, DeviceArrays, Mat, Operand, buffer_kind, host_operand,
                             registry)
from clgemm.backends.registry import array_signature
from clgemm.configs import lookup
from clgemm.configs.configuration import Config, user_config
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.core.memory_fit import INT_MAX
from clgemm.devices.info import DeviceInfo
from clgemm.library import arguments as args
from clgemm.library import stacks
from clgemm.library.cache import CACHE
from clgemm.library.hot_call import HotCall
from clgemm.library.hot_host import HostCall, host_key
from clgemm.library.order import LaunchOrder
from clgemm.library.placing import readable_buffers, upload
from clgemm.library.plan import Plan, aliases, in_place_alignment, reads_while_writing_c
from clgemm.library.program import CallProgram
from clgemm.library.signatures import program_for, run_program, signature_of
from clgemm.library.stacks import CheckedCall, gemm_stacks

def backend_for(device: DeviceInfo | str | int | None = None,
                backend: str | None = None) -> Backend:
    """The process-wide backend of a device (index, name part, DeviceInfo, or None for
    $CLGEMM_DEVICE's, else the first CPU device; with `backend` ("opencl" or "cuda"), among
    that backend's devices only, None then meaning its first). Reusing one backend per device
    is what makes every kernel build once per process: builds are cached per backend."""
    _, name = registry.split_backend(backend)
    return registry.shared_backend(registry.device_info(device, name))


def choose_kernel(device: DeviceInfo, m: int, n: int, k: int) -> Config:
    """The kernel gemm() runs for a column-major M x N x K product on the device."""
    CACHE.current()
    return CACHE.choose(device, (m, n, k))


def clear_caches(backends: bool = False) -> None:
    """Forget tuning databases, kernel choices and remembered calls (after a tuning run wrote
    new results, or the environment now names other folders); with `backends`, also the
    backends with their contexts and built kernels."""
    lookup.forget()
    CACHE.clear()
    registry.clear(backends)


# -- gemm_buffers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class _BufferCall:
    """gemm_buffers' arguments checked: the backend, the buffers' kind, A, B and C as the
    column-major kernels see them (swapped for row-major order) and their sizes."""

    be: Backend
    kind: DeviceArrays
    mats: tuple[Mat, Mat, Mat]
    sizes: tuple[int, int, int]
    alpha: np.float32
    beta: np.float32
    #: the strides of a stack follow A and B where row-major order swapped them
    swapped: bool


def _buffers_call(m: Any, n: Any, k: Any, a: Any, b: Any, c: Any, alpha: Any, beta: Any,
                  trans_a: Any, trans_b: Any, lds: dict[str, Any], offsets: dict[str, Any],
                  order: Any, queue: Any, backend: Any) -> _BufferCall:
    backend_obj, backend_name = registry.split_backend(backend)
    m, n, k = args.size("m", m), args.size("n", n), args.size("k", k)
    alpha32, beta32 = args.scalar("alpha", alpha), args.scalar("beta", beta)
    trans_a, trans_b = args.flag("trans_a", trans_a), args.flag("trans_b", trans_b)
    if order not in ("F", "C"):
        raise UsageError(f"order must be 'F' (column-major) or 'C' (row-major), got {order!r}")
    bufs = {"a": a, "b": b, "c": c}
    kind = _buffers_kind(bufs, backend_name)
    bufs["a"], bufs["b"] = kind.readable(a), kind.readable(b)  # off the vectors: copies
    be = kind.buffers_backend(list(bufs.items()), queue, backend_obj)
    mats = _buffer_mats(kind, bufs, m, n, k, trans_a, trans_b, lds, offsets, order)
    ma, mb, mc = mats["a"], mats["b"], mats["c"]
    if order == "C":
        # A row-major X is the column-major X^T, so each op flips; and C^T = op(B)^T op(A)^T
        # flips each operand once more. The flips cancel: only the operands and sizes swap.
        m, n = n, m
        ma, mb = mb, ma
    return _BufferCall(be, kind, (ma, mb, mc), (m, n, k), alpha32, beta32, order == "C")

def _buffer_mats(kind: DeviceArrays, bufs: dict[str, Any], m: int, n: int, k: int,
                 trans_a: bool, trans_b: bool, lds: dict[str, Any], offsets: dict[str, Any],
                 order: str) -> dict[str, Mat]:
    """Each buffer as a stored matrix, with the checks BLAS makes (xerbla's) plus extents."""
    shapes = {"a": (k, m) if trans_a else (m, k), "b": (n, k) if trans_b else (k, n), "c": (m, n)}
    mats: dict[str, Mat] = {}
    for name in "abc":
        rows, cols = shapes[name]
        # In column-major order consecutive elements run down a column, so ld spans a column.
        inner, outer = (rows, cols) if order == "F" else (cols, rows)
        ld = args.size(f"ld{name}", max(1, inner) if lds[name] is None else lds[name])
        off = args.size(f"{name}_offset", offsets[name])
        if ld < max(1, inner):
            what = "rows" if order == "F" else "columns"
            raise UsageError(f"ld{name}={ld} is smaller than the {inner} {what} of {name} as "
                             f"stored ({rows} x {cols}, order='{order}'); it must be at least "
                             f"{max(1, inner)}")
        if rows and cols:
            need = off + (outer - 1) * ld + inner
            have = kind.floats(bufs[name])
            if need > have:
                raise UsageError(f"buffer {name} holds {have} floats, but a {rows} x {cols} "
                                 f"matrix at offset {off} with ld{name}={ld} reaches float "
                                 f"{need}")
        mats[name] = Mat(bufs[name], off, ld, {"a": trans_a, "b": trans_b}.get(name, False))
    return mats


def _buffers_kind(bufs: dict[str, Any], backend_name: str | None) -> DeviceArrays:
    kinds = []
    for name, buf in bufs.items():
        kind = buffer_kind(buf)
        if kind is None:
            what = type(buf).__module__.split(".")[0] + "." + type(buf).__name__
            raise ArgumentTypeError(f"{name} must be a pyopencl.Buffer, or on the CUDA backend a "
                                    f"flat CuPy array, got {what} (for NumPy, pyopencl or CuPy "
                                    f"matrices use clgemm.gemm)")
        kind.check_buffer(name, buf)
        kinds.append(kind)
    named = list(bufs.items())
    args.one_kind(named, kinds, "buffer")
    args.check_backend_kind(kinds[0], named, backend_name, "buffer")
    return kinds[0]
def gemm_buffers(m: int, n: int, k: int, a: Any, b: Any, c: Any, *,
                 alpha: float = 1.0, beta: float = 0.0,
                 trans_a: bool = False, trans_b: bool = False,
                 lda: int | None = None, ldb: int | None = None, ldc: int | None = None,
                 a_offset: int = 0, b_offset: int = 0, c_offset: int = 0,
                 order: str = "F", queue: Any = None, wait_for: Any = None,
                 backend: Backend | str | None = None, rung: int | None = None,
                 params: Mapping[str, int] | None = None) -> Any:
    """C := alpha*op(A)*op(B) + beta*C on device buffers, addressed as BLAS addresses them.

    The buffers are pyopencl.Buffer objects (OpenCL) or flat float32 CuPy arrays (CUDA).
    op(A) is m x k and op(B) k x n. Each matrix is read in place at element offset `x_offset`
    with leading dimension `ldx` (default: tightly packed), column-major (`order="F"`, as BLAS)
    or row-major (`order="C"`, as CBLAS's CblasRowMajor); offsets count floats, not bytes.
    OpenCL buffers are used in their context: pass the `queue` they were written on, and the
    launches are queued there, after that work, and the call returns without waiting (as
    pyopencl's own operations do); with a `backend` and no queue, or neither (the buffers'
    context must then have a single device), the call returns when C is written. The first
    launch waits for the events of `wait_for` (pyopencl events; CUDA events on CUDA), which a
    buffer has no list of, and on an out-of-order queue every launch waits for the one before.
    Returns the event of the last launch, complete once C is written (OpenCL; None where
    nothing was queued, and on CUDA). CuPy buffers run on their device, on the current stream,
    and the call returns without waiting, as CuPy's operations do. C may share memory with A or
    B: the result is as if the operands were read before C is written. `rung` and `params`
    force a kernel instead of the tuned or default choice (sizes it cannot take are padded).
    """
    call = _buffers_call(m, n, k, a, b, c, alpha, beta, trans_a, trans_b,
                         {"a": lda, "b": ldb, "c": ldc},
                         {"a": a_offset, "b": b_offset, "c": c_offset}, order, queue, backend)
    be, kind, (ma, mb, mc), (m, n, k) = call.be, call.kind, call.mats, call.sizes
    alpha32, beta32 = call.alpha, call.beta
    kernel = None if rung is None else user_config(be.device, rung, params)
    waits = be.wait_list(wait_for)
    alias = aliases(kind, ma, mb, mc, m, n, k)
    sig = signature_of(be, Plan(m, n, k, alpha32, beta32), ma, mb, mc, kernel, alias)
    with be.activate():
        program = program_for(sig, ma, mb, mc, [])
        run_on = kind.buffers_queue(be, queue)
        chain = LaunchOrder(be, run_on, waits)
        (ma, mb), placed = readable_buffers(be, chain, program, (ma, mb))
        run_program(sig, program, ma, mb, mc, chain, [], _fits(placed, False))
        if queue is None and run_on is not None:
            run_on.finish()  # the caller has no queue to wait on
    return chain.last


def gemm_buffers_batched(m: int, n: int, k: int, a: Any, b: Any, c: Any, *, batch: int,
                         stride_a: int | None = None, stride_b: int | None = None,
                         stride_c: int | None = None, alpha: float = 1.0, beta: float = 0.0,
                         trans_a: bool = False, trans_b: bool = False,
                         lda: int | None = None, ldb: int | None = None,
                         ldc: int | None = None, a_offset: int = 0, b_offset: int = 0,
                         c_offset: int = 0, order: str = "F", queue: Any = None,
                         wait_for: Any = None, backend: Backend | str | None = None) -> Any:
    """`batch` products C_p := alpha op(A_p) op(B_p) + beta C_p at once, BLAS's strided-batched
    GEMM: product p's matrices start `stride_x` floats after product p-1's (default: one
    matrix's extent, tightly packed; 0 repeats one matrix). Every other argument is as for
    `gemm_buffers`, for the first product; all products run in one launch of the direct kernel.
    A C that shares memory with A or B is refused."""
    count = args.size("batch", batch)
    call = _buffers_call(m, n, k, a, b, c, alpha, beta, trans_a, trans_b,
                         {"a": lda, "b": ldb, "c": ldc},
                         {"a": a_offset, "b": b_offset, "c": c_offset}, order, queue, backend)
    strides = stacks.buffer_strides(call.kind, {"a": a, "b": b, "c": c}, call.mats, call.sizes,
                                    call.swapped, {"a": stride_a, "b": stride_b, "c": stride_c},
                                    count)
    be = call.be
    waits = be.wait_list(wait_for)
    with be.activate():
        run_on = call.kind.buffers_queue(be, queue)
        chain = LaunchOrder(be, run_on, waits)
        stacks.buffers_stack(be, chain, call.kind, call.mats, call.sizes, call.alpha, call.beta,
                             strides, count)
        if queue is None and run_on is not None:
            run_on.finish()
    return chain.last


# -- gemm on arrays ----------------------------------------------------------------------------
def gemm(a: Any, b: Any, c: Any = None, *, out: Any = None, alpha: float = 1.0,
         beta: float = 0.0, trans_a: bool = False, trans_b: bool = False,
         device: DeviceInfo | str | int | None = None,
         backend: Backend | str | None = None, wait_for: Any = None) -> Any:
    """C := alpha*op(A)*op(B) + beta*C on an OpenCL or CUDA device, for float32 matrices of any
    size.

    `a`, `b` and `c` are NumPy arrays (any order or strides), or device arrays read in place:
    pyopencl arrays (OpenCL) or CuPy arrays (CUDA), one kind per call. Without `c` a new
    C-ordered array is returned: a device array beside the operands if any operand is one, else
    a NumPy array. With `c` it is updated in place and returned; `out` is another name for it
    (NumPy's and CuPy's), so that `gemm(a, b, out=c)` reads as `matmul(a, b, out=c)`. C may
    share memory with A or B: the result is as if the operands were read before C is written.
    NumPy-only calls run on `device` (index, name part or DeviceInfo; default $CLGEMM_DEVICE,
    else the first CPU device) or `backend` (a backend object, or "opencl" / "cuda" for that
    backend's first device, or with `device` to choose among that backend's devices); device
    arrays run where they live: pyopencl arrays in their own context, CuPy arrays on their own
    GPU.

    On device arrays the call queues its kernels and returns without waiting, as pyopencl and
    CuPy operations do: on the arrays' own queue (OpenCL) or the current stream (CUDA), so the
    result is ready for whatever the caller queues next there. As pyopencl's operations do, the
    first launch waits for the arrays' `.events` and for `wait_for` (a list of pyopencl events;
    CUDA events on CUDA), and the last launch's event is added to the result's `.events`, so it
    also works on an out-of-order queue. NumPy results wait only for their download. Temporary
    buffers come from a memory pool, so repeated calls of one shape allocate nothing.
    """
    if out is not None:
        if c is not None:
            raise ArgumentTypeError("gemm() got both c and out, two names for the same "
                                    "argument: give one")
        c = out
    CACHE.current()
    if type(a) is np.ndarray:  # NumPy calls: the device arrays' key has no part of them
        key, on_host = None, host_key(a, b, c, alpha, beta, trans_a, trans_b, device, backend)
    else:
        same = CACHE.same.find(a, b, c, alpha, beta, trans_a, trans_b, device, backend)
        if same is not None and (result := same(a, b, c, wait_for)) is not None:
            return result  # the call before, on the same arrays
        key, on_host = _call_key(a, b, c, alpha, beta, trans_a, trans_b, device, backend), None
    hot = CACHE.hot.get(key if key is not None else on_host)  # the same call as before
    if hot is not None:
        result = hot(a, b, c, wait_for)
        if result is not None:
            if key is not None:
                CACHE.same.ran(a, b, c, alpha, beta, trans_a, trans_b, hot)
            return result
    known = CACHE.calls.get(key) if key is not None else None
    if known is None:
        known = _check_call(a, b, c, alpha, beta, trans_a, trans_b, device, backend)
        if key is not None and all(kd is not None for kd in known.kinds.values()):
            CACHE.remembered(CACHE.calls, key, lambda: known)
    on_device = [(name, x) for name, x in (("a", a), ("b", b), ("c", c))
                 if x is not None and known.kinds.get(name) is not None]
    with known.be.activate():
        if max(x.ndim for x in (a, b, c) if x is not None) > 2:
            return gemm_stacks(known, a, b, c, bool(trans_a), bool(trans_b),
                               known.be.wait_list(wait_for), key if key in CACHE.calls else None)
        return _gemm_on(known, on_device, a, b, c, bool(trans_a), bool(trans_b), wait_for,
                        key if key in CACHE.calls else on_host)


def _check_call(a: Any, b: Any, c: Any, alpha: Any, beta: Any, trans_a: Any, trans_b: Any,
                device: Any, backend: Any) -> CheckedCall:
    alpha32, beta32 = args.scalar("alpha", alpha), args.scalar("beta", beta)
    trans_a, trans_b = args.flag("trans_a", trans_a), args.flag("trans_b", trans_b)
    kinds = {"a": args.check_array("a", a), "b": args.check_array("b", b)}
    m, k = a.shape[:-3:-1] if trans_a else a.shape[-2:]
    kb, n = b.shape[:-3:-1] if trans_b else b.shape[-2:]
    if k != kb:
        raise UsageError(f"shapes do not match: op(a) is {m} x {k} and op(b) is {kb} x {n} "
                         f"(a {tuple(a.shape)}, trans_a={trans_a}; b {tuple(b.shape)}, "
                         f"trans_b={trans_b}): the inner sizes {k} and {kb} differ")
    if c is not None:
        kinds["c"] = args.check_array("c", c)
        if tuple(c.shape[-2:]) != (m, n) or (c.ndim == 2 and max(a.ndim, b.ndim) > 2):
            raise UsageError(f"c has shape {tuple(c.shape)}, but op(a) @ op(b) is {m} x {n}"
                             + (" per product of the stack" if c.ndim > 2 else ""))
        if isinstance(c, np.ndarray) and not c.flags.writeable:
            raise UsageError("c is read-only; gemm updates c in place")
    for name, v in (("M", m), ("N", n), ("K", k)):
        if v > INT_MAX:
            raise UsageError(f"{name}={v} is larger than {INT_MAX}, the largest size the kernels "
                             f"index")
    if c is None and beta32 != 0:
        raise UsageError(f"beta={beta} needs c: without c there is no C to scale (pass c, or "
                         f"leave beta at 0)")
    arrays = {"a": a, "b": b, "c": c}
    on_device = [(name, arrays[name]) for name, kind in kinds.items() if kind is not None]
    device_kinds = [kind for kind in kinds.values() if kind is not None]
    args.one_kind(on_device, device_kinds, "array")
    kind = device_kinds[0] if device_kinds else None
    be = args.pick_backend(on_device, kind, device, backend)
    return CheckedCall(be, kind, kinds, m, n, k, alpha32, beta32)


def _call_key(a: Any, b: Any, c: Any, alpha: Any, beta: Any, trans_a: Any, trans_b: Any,
              device: Any, backend: Any) -> tuple | None:
    """The key under which a call on device arrays finds its checks already made: the arrays'
    types, shapes, strides, dtypes, offsets and contexts or devices, and every other argument
    as given (`args.plain_scalars_and_flags`)."""
    if device is not None or backend is not None:
        return None
    if not args.plain_scalars_and_flags(alpha, beta, trans_a, trans_b):
        return None
    ka, kb = array_signature(a), array_signature(b)
    kc = None if c is None else array_signature(c)
    if ka is None or kb is None or (c is not None and kc is None):
        return None
    return (ka, kb, kc, alpha, beta, trans_a, trans_b)


def _operands(call: CheckedCall, a: Any, b: Any, c: Any, trans_a: bool,
              trans_b: bool) -> tuple[dict[str, Operand], Operand]:
    """Every operand described; C decides the output layout (a new C is C-ordered)."""
    ops: dict[str, Operand] = {}
    if Plan(call.m, call.n, call.k, call.alpha, call.beta).use_p:
        for name, x, t in (("a", a, trans_a), ("b", b, trans_b)):
            x_kind = call.kinds[name]
            ops[name] = (x_kind.in_place(name, x_kind.readable(x)) if x_kind is not None
                         else host_operand(name, x, prefer_c=t))
    c_kind = call.kinds.get("c")
    if c is None:  # a new C-ordered array, made once the memory check has passed
        c_op = Operand("c", None, True, max(1, call.n))
    elif c_kind is not None:
        c_op = c_kind.in_place("c", c)
    else:
        c_op = host_operand("c", c, prefer_c=True)
    return ops, c_op


def _mats(ops: dict[str, Operand], c_op: Operand, trans_a: bool,
          trans_b: bool) -> tuple[Mat, Mat, Mat]:
    """A, B and C as the kernels see them: a C-ordered C is the column-major
    C^T = op(B)^T op(A)^T, so the operands swap places instead of anything being transposed."""
    c = Mat(c_op.buf, c_op.offset, c_op.ld, False)
    if not ops:
        return Mat(None, 0, 1, False), Mat(None, 0, 1, False), c
    if c_op.c_order:
        return ops["b"].mat(not trans_b), ops["a"].mat(not trans_a), c
    return ops["a"].mat(trans_a), ops["b"].mat(trans_b), c


def _gemm_on(call: CheckedCall, on_device: list[tuple[str, Any]], a: Any, b: Any, c: Any,
             trans_a: bool, trans_b: bool, wait_for: Any = None, key: Any = None) -> Any:
    """gemm once the arguments are checked and the backend known, with its device active;
    with `key`, the call is remembered for the next one of its signature (a HotCall on device
    arrays, a HostCall on NumPy arrays that a CPU device read and wrote where they lie)."""
    be, kind, m, n, k = call.be, call.kind, call.m, call.n, call.k
    waits = be.wait_list(wait_for)
    c_kind = call.kinds.get("c") if c is not None else None
    out_kind = c_kind if c is not None else kind  # the result's kind (None: NumPy)
    if m == 0 or n == 0:
        if c is not None:
            return c
        return out_kind.empty(be, on_device, (m, n)) if out_kind is not None else np.empty(
            (m, n), dtype=np.float32)
    ops, c_op = _operands(call, a, b, c, trans_a, trans_b)
    ma, mb, mc = _mats(ops, c_op, trans_a, trans_b)
    mm, nn = (n, m) if c_op.c_order else (m, n)
    plan = Plan(mm, nn, k, call.alpha, call.beta)
    if plan.nothing_to_do:
        return c
    # Only device operands can share memory with a device C; NumPy ones are uploaded anew.
    alias = (aliases(kind, ma, mb, mc, mm, nn, k) if c_kind is not None and ops
             else (False, False))
    new = [(f"{name} (uploaded)", op.array.size) for name, op in ops.items()
           if isinstance(op.array, np.ndarray)]
    if c_kind is None:
        new.append(("c" if c is not None else "the result", m * n))
    sig = signature_of(be, plan, ma, mb, mc, None, alias)
    program = program_for(sig, ma, mb, mc, new)
    # Every check has passed; only now is anything allocated, sent or launched.
    queue = kind.queue_for(be, on_device) if kind is not None else getattr(be, "queue", None)
    if kind is not None:
        for _, x in on_device:
            waits += kind.events(x)
    order = LaunchOrder(be, queue, waits)
    result = _result(be, order, out_kind, on_device, c, c_op, (m, n))
    align = _alignment(program, c_op.c_order)
    in_place = upload(be, order, [*ops.values(), c_op], c_op, plan.read_c, m * n, align)
    ma, mb, mc = _mats(ops, c_op, trans_a, trans_b)
    program = run_program(sig, program, ma, mb, mc, order, new,
                          _fits(align, c_op.c_order) if be.device.is_cpu else None)
    if key is not None and kind is not None:
        _remember_hot(key, be, kind, program, (ma, mb, mc), c_op.c_order, c is not None,
                      (m, n), c_kind is not None and bool(ops), kind.steady_queue(be, on_device))
    if out_kind is None:  # a NumPy result
        if queue is not None and queue is not getattr(be, "queue", None):
            queue.finish()  # the download goes through the backend's own queue
        if in_place is not None:
            be.sync_host(c_op.buf, in_place)
            if key is not None and ops and be.device.is_cpu:
                _remember_host(key, be, program, ops, c_op, (m, n), align)
        else:
            flat = be.to_host(c_op.buf, m * n)
            result[...] = flat.reshape((m, n), order="C" if c_op.c_order else "F")
    else:
        out_kind.replace_events(result, order.last)
    return result


def _remember_hot(key: Any, be: Backend, kind: DeviceArrays, program: CallProgram,
                  mats: tuple[Mat, Mat, Mat], swap: bool, c_given: bool, shape: tuple[int, int],
                  may_alias: bool, queue: tuple[bool, Any]) -> None:
    """The call as a HotCall for the next of its signature; the Mats keep no buffer, so no
    array of this call outlives it through the cache."""
    a, b, c = (Mat(None, x.offset, x.ld, x.trans) for x in mats)
    check = may_alias and any(reads_while_writing_c(program.plan, x) for x in "ab")
    CACHE.remembered(CACHE.hot, key, lambda: HotCall(be, kind, program, a, b, c, swap, c_given,
                                                     shape, check, *queue))


def _alignment(program: CallProgram, swap: bool) -> dict[str, int]:
    """The bytes the caller's A and B must start on to be read where they lie: the program's
    A is the caller's B where C is C-ordered (`_mats`)."""
    first, second = in_place_alignment(program.plan)
    return {"a": second, "b": first} if swap else {"a": first, "b": second}


def _fits(align: dict[str, int], swap: bool) -> Callable[[CallProgram], bool]:
    """Whether another program may read the operands as `upload` placed them for `align`."""
    def fits(other: CallProgram) -> bool:
        need = _alignment(other, swap)
        return all(need[name] <= align[name] for name in need)
    return fits


def _remember_host(key: Any, be: Backend, program: CallProgram, ops: dict[str, Operand],
                   c_op: Operand, shape: tuple[int, int], align: dict[str, int]) -> None:
    """A call on NumPy arrays that ran in place, as a HostCall for the next of its signature;
    `align` as the call's upload took it (`_alignment`)."""
    la, lb, lc = ("C" if op.c_order else "F" for op in (ops["a"], ops["b"], c_op))
    CACHE.remembered(CACHE.hot, key, lambda: HostCall(be, program, c_op.c_order, (la, lb, lc),
                                                      shape, (align["a"], align["b"])))


def _result(be: Backend, order: LaunchOrder, out_kind: DeviceArrays | None,
            on_device: list[tuple[str, Any]], c: Any, c_op: Operand,
            shape: tuple[int, int]) -> Any:
    """The array the call returns: C where it was given, else a new one beside the operands."""
    if c is not None:
        result = c
    elif out_kind is not None:
        order.pooled()
        result = out_kind.empty(be, on_device, shape)
    else:
        result = np.empty(shape, dtype=np.float32)
    if c_op.array is None:
        c_op.array = result
        if out_kind is not None:
            c_op.buf, c_op.offset = out_kind.buffer_of(result)
    return result


# -- matmul ------------------------------------------------------------------------------------
def matmul(a: Any, b: Any, out: Any = None, *, device: DeviceInfo | str | int | None = None,
           backend: Backend | str | None = None, wait_for: Any = None) -> Any:
    """a @ b with NumPy's matmul semantics, float32: matrices, stacks of them broadcast against
    each other, and vectors (a 1-D `a` is a row, a 1-D `b` a column, and that dimension is
    dropped from the result). Arrays and devices as for `gemm`; `out`, where given, receives
    the result and is returned."""
    for name, x in (("a", a), ("b", b)):
        if getattr(x, "ndim", None) == 0:
            raise UsageError(f"{name} is a scalar: matmul takes arrays of one dimension or more "
                             f"(multiply by the scalar instead)")
    row, column = getattr(a, "ndim", 2) == 1, getattr(b, "ndim", 2) == 1
    a2 = a.reshape(1, -1) if row else a
    b2 = b.reshape(-1, 1) if column else b
    target = out
    if out is not None and (row or column):
        target = _view(out, _full_shape(out.shape, row, column))
    result = gemm(a2, b2, target, device=device, backend=backend, wait_for=wait_for)
    if out is not None:
        return out
    if row or column:
        return result.reshape(_vector_shape(result.shape, row, column))
    return result


def _full_shape(shape: tuple[int, ...], row: bool, column: bool) -> tuple[int, ...]:
    """The matrix-shaped result whose vector form `shape` is."""
    shape = tuple(shape)
    if row and column:
        return shape + (1, 1)
    if row:
        return shape[:-1] + (1, shape[-1])
    return shape + (1,)


def _vector_shape(shape: tuple[int, ...], row: bool, column: bool) -> tuple[int, ...]:
    shape = tuple(shape)
    if row and column:
        return shape[:-2]
    if row:
        return shape[:-2] + shape[-1:]
    return shape[:-1]


def _view(out: Any, shape: tuple[int, ...]) -> Any:
    """`out` seen with a matrix's dimensions added: a view, never a copy, since the result must
    land in `out` itself."""
    view = out.reshape(shape)
    if isinstance(out, np.ndarray) and not np.shares_memory(view, out):
        raise UsageError("out cannot be seen as the matrix result without a copy; give a "
                         "contiguous out")
    return view
