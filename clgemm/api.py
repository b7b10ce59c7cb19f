"""`gemm` and `gemm_buffers`: the ladder as a BLAS-style SGEMM, C := alpha*op(A)*op(B) + beta*C.

The rungs only multiply tightly packed, column-major operands whose sizes suit their tiles. This
module puts the rest of BLAS around them, on the device: pack kernels (`kernels/blas_helpers.cl`)
read the caller's matrices through offsets, leading dimensions and transposes into the layout
the chosen rung reads (padding with zeros where its tiles need whole multiples), the rung
multiplies, and an epilogue kernel writes alpha*P + beta*C into the caller's C. NumPy arrays
travel through the device and back; pyopencl arrays and buffers stay where they are.

The BLAS special cases are kept as reference BLAS has them: when beta == 0, C is not read (NaN
there does not propagate); when alpha == 0 or K == 0 there is no product, and A and B are not
read; when additionally beta == 1 nothing happens at all. Everything that can be checked is
checked before the first launch, so a mistake never leaves C half written.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .backends.base import Backend
from .devices import DeviceInfo, select_device
from .errors import UsageError
from .rungs import REGISTRY, Rung, get_rung
from .runner import kernel_source

try:
    import pyopencl as cl
    import pyopencl.array as cla
except ImportError:  # pragma: no cover - pyopencl is a hard dependency
    cl = cla = None

#: the kernels index with 32-bit ints: sizes, offsets and leading dimensions stay below this
INT_MAX = 2**31 - 1
#: the rung all sizes fall back to when no tuned configuration fits
ANY_SIZE_RUNG = 10
HELPERS_FILE = "blas_helpers.cl"

_LOCK = threading.RLock()
#: one backend per device we opened a context on ourselves, keyed by the device handle
_BY_DEVICE: dict[int, Backend] = {}
#: every backend by (context, device), including those adopted from callers' queues
_BY_CONTEXT: dict[tuple[int, int], Backend] = {}
#: serialises launches per backend: kernel objects are shared and set_args is not thread-safe
_LAUNCH_LOCKS: dict[int, threading.Lock] = {}
_DATABASES: dict[str, Any] = {}
_SELECTED: dict[str | None, DeviceInfo] = {}
_CHOICES: dict[tuple, "KernelChoice"] = {}
_CHOICE_CACHE_LIMIT = 4096


# -- backends ----------------------------------------------------------------------------------
def _register(backend: Backend) -> Backend:
    _BY_CONTEXT[(backend.context.int_ptr, backend.device.handle.int_ptr)] = backend
    _LAUNCH_LOCKS[id(backend)] = threading.Lock()
    return backend


def _device_info(device: DeviceInfo | str | int | None) -> DeviceInfo:
    """Selection by index or name, remembered: listing devices queries every platform, too slow
    to repeat on every call."""
    if isinstance(device, DeviceInfo):
        return device
    key = None if device is None else str(device).strip()
    with _LOCK:
        if key not in _SELECTED:
            _SELECTED[key] = select_device(device)
        return _SELECTED[key]


def backend_for(device: DeviceInfo | str | int | None = None) -> Backend:
    """The process-wide backend of a device (index, name part, DeviceInfo, or None for the first
    CPU device). Reusing one backend per device is what makes every kernel build once per
    process: builds are cached per backend."""
    from .backends.opencl import OpenCLBackend

    info = _device_info(device)
    if info.backend != "opencl":
        raise UsageError(f"gemm runs on OpenCL devices only; device '{info.name}' is "
                         f"{info.backend}")
    with _LOCK:
        key = info.handle.int_ptr
        if key not in _BY_DEVICE:
            _BY_DEVICE[key] = _register(OpenCLBackend(info))
        return _BY_DEVICE[key]


def _backend_for_queue(queue: Any) -> Backend:
    from .backends.opencl import OpenCLBackend

    with _LOCK:
        key = (queue.context.int_ptr, queue.device.int_ptr)
        if key not in _BY_CONTEXT:
            _register(OpenCLBackend.from_queue(queue))
        return _BY_CONTEXT[key]


def _backend_for_context(context: Any, device: Any) -> Backend:
    with _LOCK:
        key = (context.int_ptr, device.int_ptr)
        if key not in _BY_CONTEXT:
            _backend_for_queue(cl.CommandQueue(context, device))
        return _BY_CONTEXT[key]


def clear_caches(backends: bool = False) -> None:
    """Forget tuning databases and kernel choices (after a tuning run wrote new results, say);
    with `backends`, also the backends with their contexts and built kernels."""
    with _LOCK:
        _DATABASES.clear()
        _CHOICES.clear()
        _SELECTED.clear()
        if backends:
            _BY_DEVICE.clear()
            _BY_CONTEXT.clear()
            _LAUNCH_LOCKS.clear()


# -- kernel choice -----------------------------------------------------------------------------
@dataclass(frozen=True)
class KernelChoice:
    """A rung, its full parameter set, and where the parameters came from."""

    rung: int
    params: Mapping[str, int] = field(hash=False)
    source: str = "default"  # "tuned", "default" or "user"

    def describe(self) -> str:
        text = " ".join(f"{k}={v}" for k, v in self.params.items())
        return f"rung {self.rung} ({self.source}{': ' + text if text else ''})"


def _database(device: DeviceInfo) -> Any:
    """The device's tuning database, or None where there is none (the module may not exist)."""
    # The database module reads $CLGEMM_RESULTS when set, so that is part of the key.
    key = f"{device.key}|{os.environ.get('CLGEMM_RESULTS', '')}"
    if key in _DATABASES:
        return _DATABASES[key]
    db = None
    try:
        from . import database
    except ImportError:
        database = None
    if database is not None:
        try:
            db = database.load(device)
        except Exception as exc:  # a broken database must not break gemm: fall back, say so
            warnings.warn(f"clgemm: tuning database for {device.name} not usable ({exc}); "
                          f"using default configurations", RuntimeWarning, stacklevel=3)
    _DATABASES[key] = db
    return db


def _shape_distance(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    """Euclidean distance of log sizes, as the database measures nearness."""
    return math.sqrt(sum((math.log(max(x, 1)) - math.log(max(y, 1))) ** 2 for x, y in zip(a, b)))


def _tuned_choice(device: DeviceInfo, m: int, n: int, k: int) -> KernelChoice | None:
    """Per rung, the database's nearest entry that this rung can still run here (same parameter
    names, within the device's limits, able to do this shape); then the nearest of those, the
    faster on a tie."""
    db = _database(device)
    if db is None:
        return None
    limits = device.limits()
    best, best_score = None, None
    for number in sorted(REGISTRY):
        rung = REGISTRY[number]

        def usable(params: Mapping[str, int], rung: Rung = rung) -> bool:
            try:
                p = {name: int(v) for name, v in dict(params).items()}
                return (set(p) == set(rung.param_names())
                        and rung.first_violation(p, limits) is None
                        and rung.size_problem(p, m, n, k) is None)
            except Exception:  # a malformed entry is not usable, never fatal
                return False

        try:
            entry = db.best(number, (m, n, k), accept=usable)
        except Exception as exc:
            warnings.warn(f"clgemm: tuning database lookup for rung {number} failed ({exc})",
                          RuntimeWarning, stacklevel=3)
            continue
        if entry is None or not usable(entry.params):
            continue
        params = {name: int(entry.params[name]) for name in rung.param_names()}
        shape = tuple(int(v) for v in entry.shape)
        score = (_shape_distance(shape, (m, n, k)), -float(entry.gflops or 0.0), -number)
        if best_score is None or score < best_score:
            best, best_score = KernelChoice(number, params, "tuned"), score
    return best


def _default_choice(device: DeviceInfo) -> KernelChoice:
    """Rung 10 at its defaults; where it is missing or does not fit the device, the highest rung
    whose defaults fit (the caller pads sizes to its tiles)."""
    limits = device.limits()
    order = ([ANY_SIZE_RUNG] if ANY_SIZE_RUNG in REGISTRY else []) + sorted(REGISTRY, reverse=True)
    for number in order:
        rung = REGISTRY[number]
        params = rung.defaults()
        if rung.first_violation(params, limits) is None:
            return KernelChoice(number, params, "default")
    raise UsageError(f"no rung's default configuration fits device '{device.name}'")


def choose_kernel(device: DeviceInfo, m: int, n: int, k: int) -> KernelChoice:
    """The tuned configuration nearest to this shape among rungs whose size constraints hold it,
    else the default; remembered per device and shape."""
    key = (device.key, os.environ.get("CLGEMM_RESULTS", ""), m, n, k)  # as _database keys
    with _LOCK:
        if key not in _CHOICES:
            if len(_CHOICES) >= _CHOICE_CACHE_LIMIT:
                _CHOICES.clear()
            _CHOICES[key] = _tuned_choice(device, m, n, k) or _default_choice(device)
        return _CHOICES[key]


def _user_choice(device: DeviceInfo, rung: int, params: Mapping[str, int] | None) -> KernelChoice:
    r = get_rung(rung)
    resolved = r.resolve(params)
    r.validate(resolved, device.limits())
    return KernelChoice(rung, resolved, "user")


# -- plans: what runs and what it allocates, decided before anything is allocated -------------
@dataclass
class _Mat:
    """A column-major matrix in a device buffer: element (i, j) of the stored matrix is
    buf[offset + i + j*ld]; op(X) is the stored matrix, transposed when `trans`."""

    buf: Any
    offset: int
    ld: int
    trans: bool


@dataclass
class _Plan:
    m: int
    n: int
    k: int
    alpha: np.float32
    beta: np.float32
    choice: KernelChoice | None = None
    mp: int = 0
    np_: int = 0
    kp: int = 0
    pack_a: bool = False
    pack_b: bool = False
    #: the rung writes straight into C (no P buffer, no epilogue)
    direct_c: bool = False
    #: buffers the plan allocates besides the caller's: (name, float count)
    temps: list[tuple[str, int]] = field(default_factory=list)

    @property
    def use_p(self) -> bool:
        return self.k > 0 and self.alpha != 0

    @property
    def read_c(self) -> bool:
        return self.beta != 0

    @property
    def nothing_to_do(self) -> bool:
        return self.m == 0 or self.n == 0 or (not self.use_p and self.beta == 1)


def _round_up(x: int, mult: int) -> int:
    return -(-x // mult) * mult


def _plan(device: DeviceInfo, m: int, n: int, k: int, alpha: np.float32, beta: np.float32,
          a: _Mat, b: _Mat, c: _Mat, c_is_ours: bool, kernel: KernelChoice | None) -> _Plan:
    plan = _Plan(m, n, k, alpha, beta)
    if plan.nothing_to_do or not plan.use_p:
        return plan
    plan.choice = kernel or choose_kernel(device, m, n, k)
    rung = get_rung(plan.choice.rung)
    tm, tn, tk = rung.size_multiples(plan.choice.params)
    plan.mp, plan.np_, plan.kp = _round_up(m, tm), _round_up(n, tn), _round_up(k, tk)
    exact = (plan.mp, plan.np_, plan.kp) == (m, n, k)
    plan.pack_a = not (exact and not a.trans and a.offset == 0 and a.ld == m)
    if rung.transposed_b:  # the rung reads BT = op(B)^T, N x K
        plan.pack_b = not (exact and b.trans and b.offset == 0 and b.ld == n)
    else:
        plan.pack_b = not (exact and not b.trans and b.offset == 0 and b.ld == k)
    plan.direct_c = (exact and c_is_ours and alpha == 1 and beta == 0 and c.offset == 0
                     and c.ld == m)
    if plan.pack_a:
        plan.temps.append(("packed A", plan.mp * plan.kp))
    if plan.pack_b:
        plan.temps.append(("packed B", plan.kp * plan.np_))
    if not plan.direct_c:
        plan.temps.append(("product", plan.mp * plan.np_))
    for name, count in plan.temps:
        if count > INT_MAX:
            raise UsageError(f"the {name} would hold {count} floats (M={m} N={n} K={k}); the "
                             f"kernels index with 32-bit ints, so at most {INT_MAX}")
    return plan


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**26 else f"{nbytes / 2**20:.2f} MiB"


def _check_memory(device: DeviceInfo, buffers: list[tuple[str, int]]) -> None:
    """Refuse, by name and size, buffers the device cannot hold: one larger than its largest
    allocation, or all together more than its memory."""
    for name, count in buffers:
        if 4 * count > device.max_alloc_bytes:
            raise UsageError(f"{name} needs {_gib(4 * count)} ({count} floats) in one buffer; "
                             f"device '{device.name}' allows at most {_gib(device.max_alloc_bytes)}"
                             f" per allocation")
    total = 4 * sum(count for _, count in buffers)
    if total > device.global_mem_bytes:
        parts = ", ".join(f"{name} {_gib(4 * count)}" for name, count in buffers)
        raise UsageError(f"this product needs {_gib(total)} of device memory ({parts}); device "
                         f"'{device.name}' has {_gib(device.global_mem_bytes)}")


def _launch_lock(backend: Backend) -> threading.Lock:
    with _LOCK:
        return _LAUNCH_LOCKS.setdefault(id(backend), threading.Lock())


def _pack_tile(backend: Backend) -> int:
    return 16 if backend.device.max_work_group_size >= 256 else 8


def _helper(backend: Backend, kernel: str) -> Any:
    return backend.build(kernel_source(backend, HELPERS_FILE), {"PACK_TILE": _pack_tile(backend)},
                         kernel)


def _pack(backend: Backend, x: _Mat, rows: int, cols: int, out_rows: int, out_cols: int,
          transpose: bool) -> Any:
    """op(stored) zero-padded to out_rows x out_cols, in a new tight column-major buffer."""
    out = backend.alloc(out_rows * out_cols)
    t = _pack_tile(backend)
    knl = _helper(backend, "pack_transpose" if transpose else "pack_copy")
    gsize = (_round_up(out_rows, t), _round_up(out_cols, t))
    backend.launch(knl, gsize, (t, t), [rows, cols, out_rows, out_cols, x.buf, x.offset, x.ld, out])
    return out


def _execute(backend: Backend, plan: _Plan, a: _Mat, b: _Mat, c: _Mat) -> None:
    if plan.nothing_to_do:
        return
    m, n, k = plan.m, plan.n, plan.k
    p_buf, ldp = None, m
    with _launch_lock(backend):
        if plan.use_p:
            rung: Rung = get_rung(plan.choice.rung)
            a_buf = (_pack(backend, a, m, k, plan.mp, plan.kp, a.trans) if plan.pack_a
                     else a.buf)
            if rung.transposed_b:
                b_buf = (_pack(backend, b, n, k, plan.np_, plan.kp, not b.trans) if plan.pack_b
                         else b.buf)
            else:
                b_buf = (_pack(backend, b, k, n, plan.kp, plan.np_, b.trans) if plan.pack_b
                         else b.buf)
            p_buf = c.buf if plan.direct_c else backend.alloc(plan.mp * plan.np_)
            ldp = plan.mp
            knl = backend.build(kernel_source(backend, rung.file),
                                rung.macros(plan.choice.params), rung.kernel)
            gsize, lsize = rung.geometry(plan.choice.params, plan.mp, plan.np_)
            backend.launch(knl, gsize, lsize, [plan.mp, plan.np_, plan.kp, a_buf, b_buf, p_buf])
            if plan.direct_c:
                return
        t = _pack_tile(backend)
        knl = _helper(backend, "epilogue")
        backend.launch(knl, (_round_up(m, t), _round_up(n, t)), (t, t),
                       [m, n, plan.alpha, p_buf if p_buf is not None else c.buf, ldp,
                        int(plan.use_p), plan.beta, c.buf, c.offset, c.ld, int(plan.read_c)])


# -- argument checks shared by both entry points -----------------------------------------------
def _scalar(name: str, value: Any) -> np.float32:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise UsageError(f"{name} must be a real number, got {value!r}")
    with np.errstate(over="ignore"):
        return np.float32(value)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise UsageError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _size(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise UsageError(f"{name} must be a non-negative integer, got {value!r}")
    if not 0 <= value <= INT_MAX:
        raise UsageError(f"{name}={value} must be between 0 and {INT_MAX}")
    return int(value)


def _check_queue_backend(backend: Backend | None) -> None:
    from .backends.opencl import OpenCLBackend

    if backend is not None and not isinstance(backend, OpenCLBackend):
        raise UsageError(f"gemm runs on the OpenCL backend only, got {type(backend).__name__}")


# -- gemm_buffers ------------------------------------------------------------------------------
def gemm_buffers(m: int, n: int, k: int, a: Any, b: Any, c: Any, *,
                 alpha: float = 1.0, beta: float = 0.0,
                 trans_a: bool = False, trans_b: bool = False,
                 lda: int | None = None, ldb: int | None = None, ldc: int | None = None,
                 a_offset: int = 0, b_offset: int = 0, c_offset: int = 0,
                 order: str = "F", queue: Any = None, backend: Backend | None = None,
                 rung: int | None = None, params: Mapping[str, int] | None = None) -> None:
    """C := alpha*op(A)*op(B) + beta*C on pyopencl buffers, addressed as BLAS addresses them.

    op(A) is m x k and op(B) k x n. Each matrix is read in place at element offset `x_offset`
    with leading dimension `ldx` (default: tightly packed), column-major (`order="F"`, as BLAS)
    or row-major (`order="C"`, as CBLAS's CblasRowMajor); offsets count floats, not bytes. The
    call works in the buffers' context: pass the `queue` the buffers were written on (it is
    finished first, so those writes are seen) or a `backend`; without either the buffers'
    context must have a single device. The call returns when C is written. `rung` and `params`
    force a kernel instead of the tuned or default choice (sizes it cannot take are padded).
    """
    _check_queue_backend(backend)
    m, n, k = _size("m", m), _size("n", n), _size("k", k)
    alpha32, beta32 = _scalar("alpha", alpha), _scalar("beta", beta)
    trans_a, trans_b = _flag("trans_a", trans_a), _flag("trans_b", trans_b)
    if order not in ("F", "C"):
        raise UsageError(f"order must be 'F' (column-major) or 'C' (row-major), got {order!r}")
    for name, buf in (("a", a), ("b", b), ("c", c)):
        if cl is None or not isinstance(buf, cl.Buffer):
            raise UsageError(f"{name} must be a pyopencl.Buffer, got {type(buf).__name__} "
                             f"(for NumPy or pyopencl arrays use clgemm.gemm)")

    if backend is None:
        if queue is not None:
            backend = _backend_for_queue(queue)
        else:
            devices = a.context.devices
            if len(devices) != 1:
                raise UsageError(f"the buffers' context has {len(devices)} devices: pass the "
                                 f"queue to run on")
            backend = _backend_for_context(a.context, devices[0])
    elif queue is not None and queue.context != backend.context:
        raise UsageError("queue and backend belong to different OpenCL contexts")
    for name, buf in (("a", a), ("b", b), ("c", c)):
        if buf.context != backend.context:
            raise UsageError(f"buffer {name} belongs to another OpenCL context than the "
                             f"{'queue' if queue is not None else 'backend'} it was given with")

    # Stored shapes, in the caller's order, then the checks BLAS makes (xerbla's), plus extents.
    shapes = {"a": (k, m) if trans_a else (m, k), "b": (n, k) if trans_b else (k, n), "c": (m, n)}
    lds = {"a": lda, "b": ldb, "c": ldc}
    offsets = {"a": a_offset, "b": b_offset, "c": c_offset}
    bufs = {"a": a, "b": b, "c": c}
    mats: dict[str, _Mat] = {}
    for name in "abc":
        rows, cols = shapes[name]
        # In column-major order consecutive elements run down a column, so ld spans a column.
        inner, outer = (rows, cols) if order == "F" else (cols, rows)
        ld = max(1, inner) if lds[name] is None else lds[name]
        ld = _size(f"ld{name}", ld)
        off = _size(f"{name}_offset", offsets[name])
        if ld < max(1, inner):
            what = "rows" if order == "F" else "columns"
            raise UsageError(f"ld{name}={ld} is smaller than the {inner} {what} of {name} as "
                             f"stored ({rows} x {cols}, order='{order}'); it must be at least "
                             f"{max(1, inner)}")
        if rows and cols:
            need = off + (outer - 1) * ld + inner
            have = bufs[name].size // 4
            if need > have:
                raise UsageError(f"buffer {name} holds {have} floats, but a {rows} x {cols} "
                                 f"matrix at offset {off} with ld{name}={ld} reaches float "
                                 f"{need}")
        mats[name] = _Mat(bufs[name], off, ld, False)
    ma, mb, mc = mats["a"], mats["b"], mats["c"]
    ma.trans, mb.trans = trans_a, trans_b
    if order == "C":
        # A row-major X is the column-major X^T, so each op flips; and C^T = op(B)^T op(A)^T
        # flips each operand once more. The flips cancel: only the operands and sizes swap.
        m, n = n, m
        ma, mb = mb, ma

    kernel = None if rung is None else _user_choice(backend.device, rung, params)
    plan = _plan(backend.device, m, n, k, alpha32, beta32, ma, mb, mc, False, kernel)
    _check_memory(backend.device, plan.temps)
    if queue is not None:
        queue.finish()
    _execute(backend, plan, ma, mb, mc)


# -- gemm on arrays ----------------------------------------------------------------------------
def _is_cl_array(x: Any) -> bool:
    return cla is not None and isinstance(x, cla.Array)


def _check_array(name: str, x: Any) -> None:
    if not (isinstance(x, np.ndarray) or _is_cl_array(x)):
        raise UsageError(f"{name} must be a NumPy array or a pyopencl.array.Array, got "
                         f"{type(x).__name__}")
    if x.dtype != np.float32:
        raise UsageError(f"{name} has dtype {x.dtype}; gemm supports float32 only (convert with "
                         f"{name}.astype(numpy.float32))")
    if x.ndim != 2:
        raise UsageError(f"{name} must be 2-D (a matrix), got shape {tuple(x.shape)}")


@dataclass
class _Operand:
    """How one array reaches the device: a buffer (existing or still to upload) seen as a
    column-major stored matrix, `c_order` meaning the stored matrix is the array transposed."""

    name: str
    array: Any
    c_order: bool
    ld: int
    offset: int = 0
    host: np.ndarray | None = None  # contiguous host data to upload (NumPy operands)
    buf: Any = None

    def mat(self, trans: bool) -> _Mat:
        return _Mat(self.buf, self.offset, self.ld, trans != self.c_order)


def _host_operand(name: str, x: np.ndarray, prefer_c: bool) -> _Operand:
    """Contiguous arrays are used as they lie (C order read as the transpose); strided views are
    copied later, after the memory check, into the order that spares the device a transpose."""
    r, c = x.shape
    if x.flags.f_contiguous:
        return _Operand(name, x, False, max(1, r))
    if x.flags.c_contiguous:
        return _Operand(name, x, True, max(1, c))
    return _Operand(name, x, prefer_c, max(1, c) if prefer_c else max(1, r))


def _device_operand(name: str, x: Any) -> _Operand:
    """A pyopencl array read in place: any view whose rows or columns are contiguous is a
    matrix with a leading dimension, which the pack kernels read directly."""
    r, c = x.shape
    if x.offset % 4:
        raise UsageError(f"{name} starts at byte offset {x.offset}, not a whole number of floats")
    off = x.offset // 4
    if r * c == 0:
        return _Operand(name, x, False, max(1, r), off)
    s0, s1 = x.strides
    if (r == 1 or s0 == 4) and (c == 1 or (s1 % 4 == 0 and s1 // 4 >= r)):
        return _Operand(name, x, False, max(1, r) if c == 1 else s1 // 4, off)
    if (c == 1 or s1 == 4) and (r == 1 or (s0 % 4 == 0 and s0 // 4 >= c)):
        return _Operand(name, x, True, max(1, c) if r == 1 else s0 // 4, off)
    raise UsageError(f"{name} is a pyopencl view with strides {tuple(x.strides)} bytes that gemm "
                     f"cannot read in place: one of the strides must be 4 (contiguous rows or "
                     f"columns) and the other a positive multiple of 4 spanning the matrix; make "
                     f"a contiguous copy first")


def _context_of(arrays: list[tuple[str, Any]]) -> tuple[Any, Any]:
    """The one context (and device) the pyopencl operands share; a mismatch is refused."""
    first_name, first = arrays[0]
    for name, x in arrays[1:]:
        if x.context != first.context:
            raise UsageError(f"{first_name} and {name} live in different OpenCL contexts; put "
                             f"them in one context (or pass NumPy arrays)")
    for _, x in arrays:
        if x.queue is not None:
            return first.context, x.queue.device
    devices = first.context.devices
    if len(devices) != 1:
        raise UsageError(f"{first_name} has no queue and its context has {len(devices)} devices: "
                         f"give the arrays a queue")
    return first.context, devices[0]


def _pick_backend(gpu: list[tuple[str, Any]], device: Any, backend: Backend | None) -> Backend:
    _check_queue_backend(backend)
    if device is not None and backend is not None:
        info = _device_info(device)
        if info.handle != backend.device.handle:
            raise UsageError(f"device '{info.name}' is not the backend's device "
                             f"'{backend.device.name}'")
    if not gpu:
        return backend if backend is not None else backend_for(device)
    context, dev = _context_of(gpu)
    if backend is not None:
        if backend.context != context:
            raise UsageError(f"{gpu[0][0]} lives in another OpenCL context than the backend "
                             f"passed; use the arrays' context (or omit backend)")
        return backend
    if device is not None:
        info = _device_info(device)
        if info.handle not in context.devices:
            raise UsageError(f"{gpu[0][0]} lives in an OpenCL context of device "
                             f"'{dev.name.strip()}', not of the device asked for ('{info.name}')")
        dev = info.handle
    return _backend_for_context(context, dev)


def gemm(a: Any, b: Any, c: Any = None, *, alpha: float = 1.0, beta: float = 0.0,
         trans_a: bool = False, trans_b: bool = False, device: DeviceInfo | str | int | None = None,
         backend: Backend | None = None) -> Any:
    """C := alpha*op(A)*op(B) + beta*C on an OpenCL device, for float32 matrices of any size.

    `a`, `b` and `c` are NumPy arrays (any order or strides) or pyopencl arrays (read in place).
    Without `c` a new C-ordered array is returned: a pyopencl array on the operands' queue if any
    operand is one, else a NumPy array. With `c` it is updated in place and returned. NumPy-only
    calls run on `device` (index, name part or DeviceInfo; default the first CPU device) or on
    `backend`; pyopencl arrays run in their own context, which must be the same for all of them.
    """
    alpha32, beta32 = _scalar("alpha", alpha), _scalar("beta", beta)
    trans_a, trans_b = _flag("trans_a", trans_a), _flag("trans_b", trans_b)
    _check_array("a", a)
    _check_array("b", b)
    m, k = a.shape[::-1] if trans_a else a.shape
    kb, n = b.shape[::-1] if trans_b else b.shape
    if k != kb:
        raise UsageError(f"shapes do not match: op(a) is {m} x {k} and op(b) is {kb} x {n} "
                         f"(a {tuple(a.shape)}, trans_a={trans_a}; b {tuple(b.shape)}, "
                         f"trans_b={trans_b}): the inner sizes {k} and {kb} differ")
    if c is not None:
        _check_array("c", c)
        if tuple(c.shape) != (m, n):
            raise UsageError(f"c has shape {tuple(c.shape)}, but op(a) @ op(b) is {m} x {n}")
        if isinstance(c, np.ndarray) and not c.flags.writeable:
            raise UsageError("c is read-only; gemm updates c in place")
    for name, v in (("M", m), ("N", n), ("K", k)):
        if v > INT_MAX:
            raise UsageError(f"{name}={v} is larger than {INT_MAX}, the largest size the kernels "
                             f"index")

    if c is None and beta32 != 0:
        raise UsageError(f"beta={beta} needs c: without c there is no C to scale (pass c, or "
                         f"leave beta at 0)")

    named = [("a", a), ("b", b)] + ([("c", c)] if c is not None else [])
    gpu = [(name, x) for name, x in named if _is_cl_array(x)]
    be = _pick_backend(gpu, device, backend)
    out_on_device = _is_cl_array(c) if c is not None else bool(gpu)

    def new_output() -> Any:
        if not out_on_device:
            return np.empty((m, n), dtype=np.float32)
        queue = next((x.queue for _, x in gpu if x.queue is not None), be.queue)
        return cla.empty(queue, (m, n), np.float32)

    if m == 0 or n == 0:
        return c if c is not None else new_output()

    # Describe every operand; C decides the output layout. A C-ordered C is the column-major
    # C^T = op(B)^T op(A)^T, so the operands swap places instead of anything being transposed.
    reads_ab = _Plan(m, n, k, alpha32, beta32).use_p
    ops: dict[str, _Operand] = {}
    if reads_ab:
        for name, x, t in (("a", a, trans_a), ("b", b, trans_b)):
            ops[name] = (_device_operand(name, x) if _is_cl_array(x)
                         else _host_operand(name, x, prefer_c=t))
    if c is None:  # a new C-ordered array, made once the memory check has passed
        c_op = _Operand("c", None, True, max(1, n))
    elif _is_cl_array(c):
        c_op = _device_operand("c", c)
    else:
        c_op = _host_operand("c", c, prefer_c=True)
    c_is_ours = not _is_cl_array(c)  # NumPy's C and a new C are buffers nobody else reads

    def operands() -> tuple[_Mat, _Mat]:
        if not reads_ab:
            return _Mat(None, 0, 1, False), _Mat(None, 0, 1, False)
        if c_op.c_order:
            return ops["b"].mat(not trans_b), ops["a"].mat(not trans_a)
        return ops["a"].mat(trans_a), ops["b"].mat(trans_b)

    mm, nn = (n, m) if c_op.c_order else (m, n)
    ma, mb = operands()
    plan = _plan(be.device, mm, nn, k, alpha32, beta32, ma, mb,
                 _Mat(None, c_op.offset, c_op.ld, False), c_is_ours, None)
    if plan.nothing_to_do:
        return c

    new = [(f"{name} (uploaded)", op.array.size) for name, op in ops.items()
           if isinstance(op.array, np.ndarray)]
    if not _is_cl_array(c):
        new.append(("c" if c is not None else "the result", m * n))
    _check_memory(be.device, new + plan.temps)

    # Every check has passed; only now is anything allocated, sent or launched.
    result = c if c is not None else new_output()
    if c_op.array is None:
        c_op.array = result
    for _, x in gpu:
        if x.queue is not None:
            x.queue.finish()
    for op in (*ops.values(), c_op):
        if _is_cl_array(op.array):
            op.buf = op.array.base_data
        elif op is c_op and not plan.read_c:
            op.buf = be.alloc(m * n)
        else:
            order = "C" if op.c_order else "F"
            op.buf = be.to_device(np.asarray(op.array, order=order).reshape(-1, order=order))
    ma, mb = operands()
    _execute(be, plan, ma, mb, _Mat(c_op.buf, c_op.offset, c_op.ld, False))

    if isinstance(result, np.ndarray):
        flat = be.to_host(c_op.buf, m * n)
        result[...] = flat.reshape((m, n), order="C" if c_op.c_order else "F")
    return result
