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

import math
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

import numpy as np

from clgemm.backends import KINDS, Backend, DeviceArrays
from clgemm.backends import Mat as _Mat
from clgemm.backends import Operand as _Operand
from clgemm.backends import array_kind, buffer_kind, host_operand, registry
from clgemm.configs import lookup
from clgemm.configs.configuration import Config, from_found, user_config
from clgemm.configs.launch import helper_geometry, prepare, round_up
from clgemm.core.errors import ArgumentTypeError, BuildError, LaunchError, UsageError
from clgemm.core.memory_fit import INT_MAX, check_memory
from clgemm.devices.info import DeviceInfo
from clgemm.rungs import GEMM_RUNGS, Rung, get_rung
from clgemm.rungs.direct import CPU_DEFAULTS as DIRECT_CPU_DEFAULTS
from clgemm.rungs.direct import DIRECT, direct_geometry, direct_macros

#: the kernel all sizes fall back to when no tuned configuration fits: the tiled kernel for any
#: size (library kernel 13)
ANY_SIZE_RUNG = 13
HELPERS_FILE = "blas_helpers.cl"

_LOCK = threading.RLock()
_CHOICES: dict[tuple, "Config"] = {}
#: stored configurations that failed to build or launch here: never chosen again this process
_FAILED: set[tuple] = set()
#: calls on device arrays whose checks passed, by `_call_key`: backend, adapter, sizes, scalars
_CALLS: dict[tuple, tuple] = {}
#: plans by call signature (`_plan`)
_PLANS: dict[tuple, "_Plan"] = {}
_CHOICE_CACHE_LIMIT = 4096
#: stored configurations tried in one call before the rungs' defaults
_FALLBACK_TRIES = 4


# -- backends ----------------------------------------------------------------------------------
def backend_for(device: DeviceInfo | str | int | None = None,
                backend: str | None = None) -> Backend:
    """The process-wide backend of a device (index, name part, DeviceInfo, or None for
    $CLGEMM_DEVICE's, else the first CPU device; with `backend` ("opencl" or "cuda"), among that
    backend's devices only, None then meaning its first). Reusing one backend per device is what makes every kernel build
    once per process: builds are cached per backend."""
    _, name = registry.split_backend(backend)
    return registry.shared_backend(registry.device_info(device, name))


def clear_caches(backends: bool = False) -> None:
    """Forget tuning databases and kernel choices (after a tuning run wrote new results, say);
    with `backends`, also the backends with their contexts and built kernels."""
    with _LOCK:
        _CHOICES.clear()
        _FAILED.clear()
        _CALLS.clear()
        _PLANS.clear()
        lookup.forget()
        registry.clear(backends)


# -- kernel choice -----------------------------------------------------------------------------
def _tuned_choice(device: DeviceInfo, m: int, n: int,
                  k: int) -> tuple[Config, lookup.Found] | None:
    """The lookup chain's choice over every rung (`lookup.best_over_rungs`), leaving out
    configurations that already failed here in this process."""
    def accept(rung: Rung, params: Mapping[str, int]) -> bool:
        return _failed_key(device, rung.number, params) not in _FAILED

    found = lookup.best_over_rungs(device, (m, n, k), accept=accept)
    return None if found is None else (from_found(found), found)


def _direct_choice(device: DeviceInfo, m: int, n: int,
                   k: int) -> tuple[Config, lookup.Found | None] | None:
    """The direct kernel's configuration: stored (by the chain), else its defaults for the
    device type; None where neither fits the device."""
    found = lookup.best(device, DIRECT, (m, n, k))
    if found is not None and _failed_key(device, DIRECT.number, found.params) not in _FAILED:
        return from_found(found), found
    params = DIRECT.resolve(DIRECT_CPU_DEFAULTS if device.is_cpu else None)
    if (DIRECT.first_violation(params, device.limits()) is not None
            or _failed_key(device, DIRECT.number, params) in _FAILED):
        return None
    return Config(DIRECT.number, params, "default"), None


#: Without measurements of both kinds, products of fewer multiply-adds than this run on the
#: direct kernel: packing, padding and a second launch cost more than they save on small
#: products (the part CLBlast's XGEMM_MIN_INDIRECT_SIZE plays). On PoCL at 1024^3 the tuned
#: tiled kernel (12) ran twice as fast as the direct kernel's CPU defaults (53 against 27 GFLOP/s).
DIRECT_BELOW = {"GPU": 768**3, "CPU": 512**3}


def _prefer_direct(device: DeviceInfo, m: int, n: int, k: int,
                   direct: lookup.Found | None, indirect: lookup.Found | None) -> bool:
    """The crossover between the direct kernel and the rungs, from what was measured where
    both are stored: the higher expected speed at this shape (`lookup.expected_gflops`:
    measured speed, compute units filled, distance of the measured shape); else the size rule
    for the device type."""
    if direct is not None and indirect is not None:
        shape = (m, n, k)
        return (lookup.expected_gflops(device, DIRECT, direct, shape)
                >= lookup.expected_gflops(device, get_rung(indirect.rung), indirect, shape))
    return m * n * k < DIRECT_BELOW.get(device.type, DIRECT_BELOW.get("GPU", 0))


def _failed_key(device: DeviceInfo, rung: int, params: Mapping[str, int]) -> tuple:
    return (device.key, rung, tuple(sorted(params.items())))


def _default_choice(device: DeviceInfo) -> Config:
    """The tiled kernel for any size at its defaults; where it does not fit the device, the
    highest of the other kernels gemm() packs for whose defaults fit (the caller pads sizes to
    its tiles)."""
    limits = device.limits()
    order = [ANY_SIZE_RUNG] + sorted((n for n in GEMM_RUNGS if n != ANY_SIZE_RUNG), reverse=True)
    for number in order:
        rung = get_rung(number)
        params = rung.defaults()
        if rung.first_violation(params, limits) is None:
            return Config(number, params, "default")
    raise UsageError(f"no rung's default configuration fits device '{device.name}'")


def choose_kernel(device: DeviceInfo, m: int, n: int, k: int) -> Config:
    """The direct kernel or a rung, by the measured crossover (`_prefer_direct`); for a rung,
    the lookup chain's configuration, else the default; remembered per device and shape."""
    key = (device.key, lookup.read_key(), m, n, k)
    with _LOCK:
        if key not in _CHOICES:
            if len(_CHOICES) >= _CHOICE_CACHE_LIMIT:
                _CHOICES.clear()
            tuned = _tuned_choice(device, m, n, k)
            indirect = tuned[0] if tuned else _default_choice(device)
            direct = _direct_choice(device, m, n, k)
            if direct is not None and _prefer_direct(device, m, n, k, direct[1],
                                                     tuned[1] if tuned else None):
                _CHOICES[key] = direct[0]
            else:
                _CHOICES[key] = indirect
        return _CHOICES[key]


# -- plans: what runs and what it allocates, decided before anything is allocated -------------
@dataclass
class _Plan:
    m: int
    n: int
    k: int
    alpha: np.float32
    beta: np.float32
    choice: Config | None = None
    mp: int = 0
    np_: int = 0
    kp: int = 0
    pack_a: bool = False
    pack_b: bool = False
    #: the rung writes straight into C (no P buffer, no epilogue)
    direct_c: bool = False
    #: the direct kernel does the whole product in one launch (no packing, no epilogue)
    direct: bool = False
    #: buffers the plan allocates besides the caller's: (name, float count)
    temps: list[tuple[str, int]] = field(default_factory=list)

    @property
    def chosen(self) -> Config:
        """The configuration of a plan that computes a product (`use_p`), which `_new_plan`
        chooses for every such plan before anything reads it."""
        assert self.choice is not None, "a plan with a product to compute has a configuration"
        return self.choice

    @property
    def use_p(self) -> bool:
        return self.k > 0 and self.alpha != 0

    @property
    def read_c(self) -> bool:
        return self.beta != 0

    @property
    def nothing_to_do(self) -> bool:
        return self.m == 0 or self.n == 0 or (not self.use_p and self.beta == 1)


def _panel_steps(plan: _Plan) -> list[tuple[Any, int]]:
    """The helper steps the chosen configuration adds after gemm's own packing (panels), each
    with the rows of the operand it rewrites: A is mp x kp, BT np x kp."""
    rung = get_rung(plan.chosen.rung)
    extra = rung.extra_helpers(plan.chosen.params) if rung.extra_helpers else ()
    return [(h, plan.mp if h.operand == "A" else plan.np_) for h in extra]


def _plan(device: DeviceInfo, m: int, n: int, k: int, alpha: np.float32, beta: np.float32,
          a: _Mat, b: _Mat, c: _Mat, c_is_ours: bool, kernel: Config | None) -> _Plan:
    """What runs and what it allocates; remembered per call signature (a plan depends only on
    the sizes, scalars, layouts and the kernel choice, never on the buffers)."""
    key = (device.key, lookup.read_key(), m, n, k, float(alpha), float(beta),
           a.offset, a.ld, a.trans, b.offset, b.ld, b.trans, c.offset, c.ld, c_is_ours, kernel)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _new_plan(device, m, n, k, alpha, beta, a, b, c, c_is_ours, kernel)
        with _LOCK:
            if len(_PLANS) >= _CHOICE_CACHE_LIMIT:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


def _new_plan(device: DeviceInfo, m: int, n: int, k: int, alpha: np.float32, beta: np.float32,
              a: _Mat, b: _Mat, c: _Mat, c_is_ours: bool, kernel: Config | None) -> _Plan:
    plan = _Plan(m, n, k, alpha, beta)
    if plan.nothing_to_do or not plan.use_p:
        return plan
    plan.choice = kernel or choose_kernel(device, m, n, k)
    if plan.choice.rung == DIRECT.number:
        # One launch reads the operands where they lie and writes alpha*P + beta*C itself.
        plan.direct, plan.direct_c = True, True
        plan.mp, plan.np_, plan.kp = m, n, k
        return plan
    rung = get_rung(plan.choice.rung)
    tm, tn, tk = rung.size_multiples(plan.choice.params)
    plan.mp, plan.np_, plan.kp = round_up(m, tm), round_up(n, tn), round_up(k, tk)
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
    for helper, rows in _panel_steps(plan):
        plan.temps.append((helper.name, rows * plan.kp))
    if not plan.direct_c:
        plan.temps.append(("product", plan.mp * plan.np_))
    for name, count in plan.temps:
        if count > INT_MAX:
            raise UsageError(f"the {name} would hold {count} floats (M={m} N={n} K={k}); the "
                             f"kernels index with 32-bit ints, so at most {INT_MAX}")
    return plan


def _pack_tile(backend: Backend) -> int:
    return 16 if backend.device.max_work_group_size >= 256 else 8


def _helper(backend: Backend, kernel: str) -> Any:
    return backend.program(HELPERS_FILE, {"PACK_TILE": _pack_tile(backend)}, kernel)


def _tiles_geometry(backend: Backend, rows: int, cols: int) -> tuple[tuple[int, int],
                                                                      tuple[int, int]]:
    """Global and local size of a helper kernel with one work-item per element of a
    rows x cols matrix, in square work-groups."""
    t = _pack_tile(backend)
    return (round_up(rows, t), round_up(cols, t)), (t, t)


def _stored(x: _Mat, rows: int, cols: int) -> tuple[int, int]:
    """The stored matrix's rows and columns, for op(X) of rows x cols."""
    return (cols, rows) if x.trans else (rows, cols)


def _operand_dims(plan: _Plan) -> tuple[tuple[int, int], tuple[int, int]]:
    """op(A) and op(B) of the plan: m x k and k x n."""
    return (plan.m, plan.k), (plan.k, plan.n)


def _reads_while_writing_c(plan: _Plan, operand: str) -> bool:
    """Whether a launch of the plan reads the operand where it lies while it writes C: the
    direct kernel, or a rung that writes C itself from an operand that was not packed. Every
    other plan reads the operands (or packed copies) in launches that end before the epilogue,
    the only launch that writes C, begins."""
    if plan.direct:
        return True
    return plan.direct_c and not (plan.pack_a if operand == "a" else plan.pack_b)


def _copies(plan: _Plan, alias: tuple[bool, bool]) -> list[str]:
    """The operands the plan must copy before C is written: those that share memory with C
    (`alias`, for A and B) and that a C-writing launch would read in place."""
    if not plan.use_p:
        return []
    return [name for name, shared in zip("ab", alias)
            if shared and _reads_while_writing_c(plan, name)]


def _launches(backend: Backend, plan: _Plan,
              alias: tuple[bool, bool] = (False, False)) -> list[tuple[str, Any, Any]]:
    """(what, global size, local size) of every launch the plan makes, in order."""
    out = []
    if plan.direct:
        dims = dict(zip("ab", _operand_dims(plan)))
        for name in _copies(plan, alias):
            rows, cols = dims[name]
            out.append((f"copy of {name.upper()}", *_tiles_geometry(backend, rows, cols)))
        return out + [("direct kernel", *direct_geometry(plan.chosen.params, plan.m, plan.n))]
    if plan.use_p:
        rung = get_rung(plan.chosen.rung)
        if plan.pack_a:
            out.append(("pack of A", *_tiles_geometry(backend, plan.mp, plan.kp)))
        if plan.pack_b:
            rows, cols = (plan.np_, plan.kp) if rung.transposed_b else (plan.kp, plan.np_)
            out.append(("pack of B", *_tiles_geometry(backend, rows, cols)))
        for helper, rows in _panel_steps(plan):
            out.append((helper.name, *helper_geometry(helper, rows, plan.kp)))
        out.append((f"rung {rung.number}", *rung.geometry(plan.chosen.params, plan.mp, plan.np_)))
    if not plan.direct_c:
        out.append(("epilogue", *_tiles_geometry(backend, plan.m, plan.n)))
    return out


def _check_launches(backend: Backend, plan: _Plan,
                    alias: tuple[bool, bool] = (False, False)) -> None:
    """Refuse, before anything runs, a launch with more work-groups than the API allows along
    a dimension (CUDA: 65535 along y and z), rather than fail halfway through."""
    limits = backend.max_groups
    if limits is None or plan.nothing_to_do:
        return
    for what, gsize, lsize in _launches(backend, plan, alias):
        for axis, (size, local, most) in enumerate(zip(gsize, lsize, limits)):
            groups = -(-size // local)
            if groups > most:
                raise UsageError(f"this product is too large for the {backend.name} backend: "
                                 f"the {what} kernel would need {groups} work-groups along "
                                 f"dimension {axis}, and {backend.name} allows at most {most}")


def _shares_memory(kind: DeviceArrays, x: _Mat, rows: int, cols: int, c: _Mat, m: int,
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


def _aliases(kind: DeviceArrays | None, a: _Mat, b: _Mat, c: _Mat, m: int, n: int,
             k: int) -> tuple[bool, bool]:
    """Whether A and whether B share memory with C (op(A) m x k, op(B) k x n, C m x n)."""
    if kind is None:
        return False, False
    return (_shares_memory(kind, a, *_stored(a, m, k), c, m, n),
            _shares_memory(kind, b, *_stored(b, k, n), c, m, n))


class _Order:
    """The order of one call's launches on its queue.

    The first launch waits for the events the call was given: the operands' pending work (a
    pyopencl array's `.events`) and the caller's `wait_for`. On an in-order queue the later
    launches follow by queue order alone; on an out-of-order queue each waits for the one before
    (pack, panels, rung, epilogue run as a chain), and `last` is the event whose completion
    means C is written.

    Buffers from the pool are the other hazard of an out-of-order queue: a buffer handed back
    (a scratch buffer of an earlier call, an output the caller dropped) may still be read by
    work queued before, which the pool does not know of. Tracking every reader is not possible
    (the caller's own kernels read gemm()'s outputs), so the first time a call takes a buffer from the
    pool on such a queue it queues a marker, which completes when everything queued before it
    has, and its launches wait for that too. This orders only the call's own work after the
    earlier work, not the caller's later work; calls that take nothing from the pool (the
    direct kernel into a given C) and in-order queues need no marker."""

    def __init__(self, backend: Backend, queue: Any, wait_for: list[Any]):
        self.backend = backend
        self.queue = queue
        self.in_order = backend.in_order(queue)
        self.marked = self.in_order
        self.wait = wait_for
        #: the event of the last launch queued, if the backend has events
        self.last: Any = None

    def pooled(self) -> None:
        """Called before a buffer is taken from the pool for this call's launches to write."""
        if not self.marked:
            self.marked = True
            marker = self.backend.marker(self.queue)
            if marker is not None:
                self.wait = [*self.wait, marker]

    def scratch(self, count: int) -> Any:
        self.pooled()
        return self.backend.scratch(count, self.queue)

    def enqueue(self, kernel: Any, global_size: Any, local_size: Any, args: list) -> None:
        if self.wait:
            event = self.backend.enqueue(kernel, global_size, local_size, args, self.queue,
                                         wait_for=self.wait)
        else:
            event = self.backend.enqueue(kernel, global_size, local_size, args, self.queue)
        self.last = event
        self.wait = [event] if event is not None and not self.in_order else []


def _pack(backend: Backend, order: _Order, x: _Mat, rows: int, cols: int, out_rows: int,
          out_cols: int, transpose: bool) -> Any:
    """op(stored) zero-padded to out_rows x out_cols, in a tight column-major scratch buffer."""
    out = order.scratch(out_rows * out_cols)
    knl = _helper(backend, "pack_transpose" if transpose else "pack_copy")
    gsize, lsize = _tiles_geometry(backend, out_rows, out_cols)
    order.enqueue(knl, gsize, lsize, [rows, cols, out_rows, out_cols, x.buf, x.offset, x.ld, out])
    return out


def _copy(backend: Backend, order: _Order, x: _Mat, rows: int, cols: int) -> _Mat:
    """A tight copy of op(X) (rows x cols) as it is stored, read in its place by the launches
    that write C, so that writing C cannot change what they read."""
    sr, sc = _stored(x, rows, cols)
    return _Mat(_pack(backend, order, x, sr, sc, sr, sc, False), 0, max(1, sr), x.trans)


def _unshared(backend: Backend, order: _Order, plan: _Plan, alias: tuple[bool, bool],
              a: _Mat, b: _Mat) -> tuple[_Mat, _Mat]:
    """A and B as the plan's launches may read them while C is written: copies of those that
    share memory with C and would be read in place (`_copies`), the others as they are."""
    copies = _copies(plan, alias)
    if "a" in copies:
        a = _copy(backend, order, a, plan.m, plan.k)
    if "b" in copies:
        b = _copy(backend, order, b, plan.k, plan.n)
    return a, b


def _execute(backend: Backend, plan: _Plan, a: _Mat, b: _Mat, c: _Mat, order: _Order,
             alias: tuple[bool, bool] = (False, False)) -> None:
    """Queue every launch of the plan in `order` and return without waiting. Scratch buffers
    come from the backend's pool and go back to it when this returns; later work on the same
    queue is ordered after these launches (`_Order`), so reusing them is safe. An operand that
    shares memory with C (`alias`) and would be read while C is written is copied first, as
    NumPy's matmul does with an `out` that overlaps its inputs; only then, so the common call
    pays nothing."""
    if plan.nothing_to_do:
        return
    m, n, k = plan.m, plan.n, plan.k
    p_buf, ldp = None, m
    with backend.lock:
        if plan.direct:
            knl = backend.program(DIRECT.file, direct_macros(plan.chosen.params, a.trans,
                                                             b.trans), DIRECT.kernel)
            a, b = _unshared(backend, order, plan, alias, a, b)
            gsize, lsize = direct_geometry(plan.chosen.params, m, n)
            order.enqueue(knl, gsize, lsize,
                          [m, n, k, plan.alpha, plan.beta, a.buf, a.offset, a.ld,
                           b.buf, b.offset, b.ld, c.buf, c.offset, c.ld])
            return
        if plan.use_p:
            rung: Rung = get_rung(plan.chosen.rung)
            # Built before anything is queued, so a configuration that fails to build here
            # leaves nothing half done and the next choice can run instead.
            backend.program(rung.file, rung.macros(plan.chosen.params), rung.kernel)
            a, b = _unshared(backend, order, plan, alias, a, b)
            a_buf = (_pack(backend, order, a, m, k, plan.mp, plan.kp, a.trans) if plan.pack_a
                     else a.buf)
            if rung.transposed_b:
                b_buf = (_pack(backend, order, b, n, k, plan.np_, plan.kp, not b.trans)
                         if plan.pack_b else b.buf)
            else:
                b_buf = (_pack(backend, order, b, k, n, plan.kp, plan.np_, b.trans)
                         if plan.pack_b else b.buf)
            p_buf = c.buf if plan.direct_c else order.scratch(plan.mp * plan.np_)
            ldp = plan.mp
            # gemm's own packing did the transpose of B; what remains is packing into panels
            prepared = prepare(backend, rung, plan.chosen.params, plan.mp, plan.np_, plan.kp,
                               a_buf, b_buf, p_buf, [h for h, _ in _panel_steps(plan)],
                               lambda name, count: order.scratch(count))
            for step in (*prepared.helpers, prepared.main):
                order.enqueue(step.kernel, step.global_size, step.local_size, step.args)
            if plan.direct_c:
                return
        knl = _helper(backend, "epilogue")
        gsize, lsize = _tiles_geometry(backend, m, n)
        order.enqueue(knl, gsize, lsize,
                      [m, n, plan.alpha, p_buf if p_buf is not None else c.buf, ldp,
                       int(plan.use_p), plan.beta, c.buf, c.offset, c.ld, int(plan.read_c)])


def _run(backend: Backend, plan: _Plan, replan: Callable[[], _Plan],
         check: Callable[[_Plan], None], a: _Mat, b: _Mat, c: _Mat, order: _Order,
         alias: tuple[bool, bool] = (False, False)) -> None:
    """Queue the plan. A stored configuration (tuned, or carried over by the lookup chain) that
    fails to build or launch here is dropped for the rest of the process with a warning, and the
    next choice runs instead: a bad database entry slows a call once, it never fails it. The
    kernel is built before anything is queued, and C is written by the last launch only, so a
    failed attempt leaves C as it was. Configurations the caller forced, and the rungs' own
    defaults, fail loudly."""
    for _ in range(_FALLBACK_TRIES):
        try:
            _execute(backend, plan, a, b, c, order, alias)
            return
        except (BuildError, LaunchError) as exc:
            choice = plan.choice
            if choice is None or choice.source in ("user", "default"):
                raise
            _drop_choice(backend.device, choice, exc)
        plan = replan()
        check(plan)
    _execute(backend, plan, a, b, c, order, alias)


def _drop_choice(device: DeviceInfo, choice: Config, exc: Exception) -> None:
    warnings.warn(f"clgemm: {choice.describe()} failed on {device.name} ({exc}); using the next "
                  f"choice instead", RuntimeWarning, stacklevel=4)
    with _LOCK:
        _FAILED.add(_failed_key(device, choice.rung, choice.params))
        for key in [k for k, v in _CHOICES.items() if k[0] == device.key and v == choice]:
            del _CHOICES[key]
        for key in [k for k, v in _PLANS.items() if k[0] == device.key and v.choice == choice]:
            del _PLANS[key]


# -- argument checks shared by both entry points -----------------------------------------------
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _scalar(name: str, value: Any) -> np.float32:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise ArgumentTypeError(f"{name} must be a real number, got {value!r}")
    try:
        as_float = float(value)
    except OverflowError:  # an int too large for any float
        as_float = math.inf
    # A finite value past float32's range would become Inf: refuse it rather than compute
    # with something the caller did not write. NaN and Inf given as such are kept (IEEE).
    if abs(as_float) > _FLOAT32_MAX and (math.isfinite(as_float) or isinstance(value, int)):
        if not (abs(as_float) < _FLOAT32_MAX * (1 + 2**-25)):  # rounds down onto the maximum
            raise UsageError(f"{name}={value!r} is outside float32's range (at most "
                             f"{_FLOAT32_MAX:.6g} in magnitude)")
    return np.float32(as_float)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _size(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"{name} must be a non-negative integer, got {value!r}")
    if not 0 <= value <= INT_MAX:
        raise UsageError(f"{name}={value} must be between 0 and {INT_MAX}")
    return int(value)


def _check_backend_kind(kind: DeviceArrays, named: list[tuple[str, Any]],
                        backend_name: str | None, what: str = "array") -> None:
    """Device memory stays on its own backend: CuPy arrays cannot go to OpenCL, nor pyopencl
    arrays (or buffers) to CUDA."""
    if backend_name is not None and backend_name != kind.backend:
        other = KINDS[backend_name].label
        hint = (f"pass NumPy or {other} arrays" if what == "array"
                else f"pass {KINDS[backend_name].label} buffers")
        raise UsageError(f"{named[0][0]} is a {kind.label} {what}, which lives on the "
                         f"{kind.backend} backend, but the {backend_name} backend was asked for "
                         f"(on {backend_name}, {hint})")


def _one_kind(named: list[tuple[str, Any]], kinds: list[DeviceArrays], what: str) -> None:
    """Device arrays (or buffers) of different backends cannot meet in one call."""
    for (name, _), kind in zip(named[1:], kinds[1:]):
        if kind is not kinds[0]:
            raise UsageError(f"{named[0][0]} is a {kinds[0].label} {what} and {name} a "
                             f"{kind.label} {what}: they live on different backends and cannot "
                             f"be used in one call")


# -- gemm_buffers ------------------------------------------------------------------------------
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
    backend_obj, backend_name = registry.split_backend(backend)
    m, n, k = _size("m", m), _size("n", n), _size("k", k)
    alpha32, beta32 = _scalar("alpha", alpha), _scalar("beta", beta)
    trans_a, trans_b = _flag("trans_a", trans_a), _flag("trans_b", trans_b)
    if order not in ("F", "C"):
        raise UsageError(f"order must be 'F' (column-major) or 'C' (row-major), got {order!r}")
    bufs = {"a": a, "b": b, "c": c}
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
    _one_kind(named, kinds, "buffer")
    kind = kinds[0]
    _check_backend_kind(kind, named, backend_name, "buffer")
    backend = kind.buffers_backend(named, queue, backend_obj)

    # Stored shapes, in the caller's order, then the checks BLAS makes (xerbla's), plus extents.
    shapes = {"a": (k, m) if trans_a else (m, k), "b": (n, k) if trans_b else (k, n), "c": (m, n)}
    lds = {"a": lda, "b": ldb, "c": ldc}
    offsets = {"a": a_offset, "b": b_offset, "c": c_offset}
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
            have = kind.floats(bufs[name])
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

    kernel = None if rung is None else user_config(backend.device, rung, params)

    def replan() -> _Plan:
        return _plan(backend.device, m, n, k, alpha32, beta32, ma, mb, mc, False, kernel)

    waits = backend.wait_list(wait_for)
    alias = _aliases(kind, ma, mb, mc, m, n, k)

    def check(p: _Plan) -> None:
        check_memory(backend.device, p.temps)
        _check_launches(backend, p, alias)

    plan = replan()
    check(plan)
    with backend.activate():
        run_on = kind.buffers_queue(backend, queue)
        chain = _Order(backend, run_on, waits)
        _run(backend, plan, replan, check, ma, mb, mc, chain, alias)
        if queue is None and run_on is not None:
            run_on.finish()  # the caller has no queue to wait on
    return chain.last


# -- gemm on arrays ----------------------------------------------------------------------------
def _check_array(name: str, x: Any) -> DeviceArrays | None:
    """The array's device kind (None for NumPy), once it is known to be a float32 matrix."""
    kind = None
    if not isinstance(x, np.ndarray):
        kind = array_kind(x)
        if kind is None:
            raise ArgumentTypeError(f"{name} must be a NumPy array or a pyopencl.array.Array, "
                                    f"got {type(x).__name__} (or, on the CUDA backend, a "
                                    f"cupy.ndarray)")
    if x.dtype != np.float32:
        raise ArgumentTypeError(f"{name} has dtype {x.dtype}; gemm supports float32 only "
                                f"(convert with {name}.astype(numpy.float32))")
    if x.ndim != 2:
        raise UsageError(f"{name} must be 2-D (a matrix), got shape {tuple(x.shape)}")
    return kind


def _pick_backend(on_device: list[tuple[str, Any]], kind: DeviceArrays | None, device: Any,
                  backend: Any) -> Backend:
    """The backend of the call: the device arrays' own (checked against `device` and `backend`
    where given), else the one asked for, else $CLGEMM_DEVICE's or the first CPU device's."""
    backend_obj, backend_name = registry.split_backend(backend)
    if kind is not None:
        _check_backend_kind(kind, on_device, backend_name)
        if isinstance(device, DeviceInfo) and device.backend != kind.backend:
            raise UsageError(f"{on_device[0][0]} is a {kind.label} array, which lives on the "
                             f"{kind.backend} backend, but device '{device.name}' is on the "
                             f"{device.backend} backend")
    info = None
    if device is not None:
        info = registry.device_info(device, backend_name
                                    or (kind.backend if kind is not None else None))
        if backend_obj is not None and (info.backend != backend_obj.name
                                        or info.handle != backend_obj.device.handle):
            raise UsageError(f"device '{info.name}' is not the backend's device "
                             f"'{backend_obj.device.name}'")
    if kind is None:
        if backend_obj is not None:
            return backend_obj
        return registry.shared_backend(info or registry.device_info(None, backend_name))
    return kind.backend_for(on_device, info, backend_obj)


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
    key = _call_key(a, b, c, alpha, beta, trans_a, trans_b, device, backend)
    known = _CALLS.get(key) if key is not None else None
    if known is not None:  # the same call as before on other arrays: its checks all hold
        be, kind, kinds, m, n, k, alpha32, beta32 = known
        on_device = [(name, x) for name, x in (("a", a), ("b", b), ("c", c)) if x is not None]
        with be.activate():
            return _gemm_on(be, kind, on_device, a, b, c, m, n, k, alpha32, beta32, trans_a,
                            trans_b, kinds, wait_for)
    alpha32, beta32 = _scalar("alpha", alpha), _scalar("beta", beta)
    trans_a, trans_b = _flag("trans_a", trans_a), _flag("trans_b", trans_b)
    kinds = {"a": _check_array("a", a), "b": _check_array("b", b)}
    m, k = a.shape[::-1] if trans_a else a.shape
    kb, n = b.shape[::-1] if trans_b else b.shape
    if k != kb:
        raise UsageError(f"shapes do not match: op(a) is {m} x {k} and op(b) is {kb} x {n} "
                         f"(a {tuple(a.shape)}, trans_a={trans_a}; b {tuple(b.shape)}, "
                         f"trans_b={trans_b}): the inner sizes {k} and {kb} differ")
    if c is not None:
        kinds["c"] = _check_array("c", c)
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

    arrays = {"a": a, "b": b, "c": c}
    on_device = [(name, arrays[name]) for name, kind in kinds.items() if kind is not None]
    device_kinds = [kinds[name] for name, _ in on_device]
    _one_kind(on_device, device_kinds, "array")
    kind = device_kinds[0] if device_kinds else None
    be = _pick_backend(on_device, kind, device, backend)
    with be.activate():
        result = _gemm_on(be, kind, on_device, a, b, c, m, n, k, alpha32, beta32, trans_a,
                          trans_b, kinds, wait_for)
    if key is not None and len(on_device) == len(kinds):
        with _LOCK:
            if len(_CALLS) >= _CHOICE_CACHE_LIMIT:
                _CALLS.clear()
            _CALLS[key] = (be, kind, kinds, m, n, k, alpha32, beta32)
    return result


def _array_key(x: Any) -> tuple | None:
    """What the checks and the backend of a call depend on, for a device array; None for
    anything else (NumPy arrays are copied anyway, so their calls gain nothing from this)."""
    cls = type(x)
    if cls.__module__.startswith("pyopencl"):
        queue = x.queue
        return (cls, x.shape, x.strides, x.dtype.char, x.offset, x.context.int_ptr,
                queue.int_ptr if queue is not None else 0)
    if cls.__module__.startswith("cupy"):
        return (cls, x.shape, x.strides, x.dtype.char, x.data.ptr % 4, x.device.id)
    return None


def _call_key(a: Any, b: Any, c: Any, alpha: Any, beta: Any, trans_a: Any, trans_b: Any,
              device: Any, backend: Any) -> tuple | None:
    """The key under which a call on device arrays finds its checks already made (`_CALLS`):
    the arrays' types, shapes, strides, dtypes, offsets and contexts or devices, and every other
    argument as given. Only plain Python scalars and flags take part, so a value that compares
    equal but would be refused (a NumPy bool, say) always goes through the checks."""
    if device is not None or backend is not None:
        return None
    if type(trans_a) is not bool or type(trans_b) is not bool:
        return None
    if type(alpha) not in (float, int) or type(beta) not in (float, int):
        return None
    ka, kb = _array_key(a), _array_key(b)
    kc = None if c is None else _array_key(c)
    if ka is None or kb is None or (c is not None and kc is None):
        return None
    return (ka, kb, kc, alpha, beta, trans_a, trans_b, lookup.read_key())


def _gemm_on(be: Backend, kind: DeviceArrays | None, on_device: list[tuple[str, Any]], a: Any,
             b: Any, c: Any, m: int, n: int, k: int, alpha32: np.float32, beta32: np.float32,
             trans_a: bool, trans_b: bool, kinds: dict[str, DeviceArrays | None],
             wait_for: Any = None) -> Any:
    """gemm once the backend is known, with its device active: plan, check, then run."""
    waits = be.wait_list(wait_for)
    c_kind = kinds["c"] if c is not None else None
    c_on_device = c_kind is not None
    # the result's device kind: C's where it is given, else the operands' (None: NumPy)
    out_kind = c_kind if c is not None else kind

    if m == 0 or n == 0:
        if c is not None:
            return c
        return out_kind.empty(be, on_device, (m, n)) if out_kind is not None else np.empty(
            (m, n), dtype=np.float32)

    # Describe every operand; C decides the output layout. A C-ordered C is the column-major
    # C^T = op(B)^T op(A)^T, so the operands swap places instead of anything being transposed.
    reads_ab = _Plan(m, n, k, alpha32, beta32).use_p
    ops: dict[str, _Operand] = {}
    if reads_ab:
        for name, x, t in (("a", a, trans_a), ("b", b, trans_b)):
            x_kind = kinds[name]
            ops[name] = (x_kind.in_place(name, x) if x_kind is not None
                         else host_operand(name, x, prefer_c=t))
    if c is None:  # a new C-ordered array, made once the memory check has passed
        c_op = _Operand("c", None, True, max(1, n))
    elif c_kind is not None:
        c_op = c_kind.in_place("c", c)
    else:
        c_op = host_operand("c", c, prefer_c=True)
    c_is_ours = not c_on_device  # NumPy's C and a new C are buffers nobody else reads

    def operands() -> tuple[_Mat, _Mat]:
        if not reads_ab:
            return _Mat(None, 0, 1, False), _Mat(None, 0, 1, False)
        if c_op.c_order:
            return ops["b"].mat(not trans_b), ops["a"].mat(not trans_a)
        return ops["a"].mat(trans_a), ops["b"].mat(trans_b)

    mm, nn = (n, m) if c_op.c_order else (m, n)

    def replan() -> _Plan:
        ma, mb = operands()
        return _plan(be.device, mm, nn, k, alpha32, beta32, ma, mb,
                     _Mat(None, c_op.offset, c_op.ld, False), c_is_ours, None)

    plan = replan()
    if plan.nothing_to_do:
        return c

    # Only device operands can share memory with a device C; NumPy ones are uploaded anew.
    alias = (_aliases(kind, *operands(), _Mat(c_op.buf, c_op.offset, c_op.ld, False), mm, nn, k)
             if c_on_device and reads_ab else (False, False))
    new = [(f"{name} (uploaded)", op.array.size) for name, op in ops.items()
           if isinstance(op.array, np.ndarray)]
    if not c_on_device:
        new.append(("c" if c is not None else "the result", m * n))

    def check(p: _Plan) -> None:
        check_memory(be.device, new + p.temps)
        _check_launches(be, p, alias)

    check(plan)

    # Every check has passed; only now is anything allocated, sent or launched.
    if kind is not None:  # the arrays that live on a device, all of this kind
        queue = kind.queue_for(be, on_device)
        for _, x in on_device:
            waits += kind.events(x)
    else:
        queue = getattr(be, "queue", None)
    order = _Order(be, queue, waits)
    if c is not None:
        result = c
    elif out_kind is not None:
        order.pooled()
        result = out_kind.empty(be, on_device, (m, n))
    else:
        result = np.empty((m, n), dtype=np.float32)
    if c_op.array is None:
        c_op.array = result
        if out_kind is not None:
            c_op.buf, c_op.offset = out_kind.buffer_of(result)
    for op in (*ops.values(), c_op):
        if op.buf is not None:
            continue
        if op is c_op and not plan.read_c:
            op.buf = order.scratch(m * n)
        else:
            layout: Literal["C", "F"] = "C" if op.c_order else "F"
            op.buf = be.to_device(np.asarray(op.array, order=layout).reshape(-1, order=layout))
    ma, mb = operands()
    _run(be, plan, replan, check, ma, mb, _Mat(c_op.buf, c_op.offset, c_op.ld, False), order,
         alias)

    if out_kind is None:  # a NumPy result
        if queue is not None and queue is not getattr(be, "queue", None):
            queue.finish()  # the download goes through the backend's own queue
        flat = be.to_host(c_op.buf, m * n)
        result[...] = flat.reshape((m, n), order="C" if c_op.c_order else "F")
    else:
        out_kind.add_event(result, order.last)
    return result
