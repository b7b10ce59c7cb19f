"""A backend for tests that need no OpenCL: one made-up device, and kernels emulated with NumPy.

It is a backend package as `clgemm.backends.base.BackendPackage` describes one (this module's
names), so it joins clgemm by one `registry.register(numpy_backend)` and leaves by
`registry.unregister(NAME)` (the `numpy_backend` fixture of `conftest.py` does both). Everything
above the backends then runs on it as on a real device: gemm() with its kernel choice, packing
and epilogue, the ladder's runner, the tuner's search.

Buffers are flat float32 NumPy arrays. `build` returns a callable emulating the kernel of that
name: each launch computes the whole kernel's result in one go, but through the kernel's own
argument conventions (element offsets, leading dimensions, which operand comes transposed,
panels) and only over the part of the output its global size covers, so a caller that passes a
wrong offset, leading dimension or geometry gets a wrong or a refused result, as on a device.
Reads and writes outside a buffer are LaunchErrors; a local size other than a kernel's required
one is refused as OpenCL refuses it. New buffers hold NaN, so an output a launch does not write
shows.

Times are made up but deterministic: a launch's work over a rate that depends on the kernel and
its work-group size (best at 256 work-items), so the tuner has something stable to rank.
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from clgemm.backends.base import (Backend, DeviceArrays, LaunchLog, Lookups, TimedCall,
                                  VendorBlas, define_options)
from clgemm.core.errors import BuildError, LaunchError, UsageError
from clgemm.devices.info import DeviceInfo
from clgemm.rungs import ALL_RUNGS, Rung
from clgemm.rungs.direct import DIRECT

NAME = "numpy-test"
LABEL = "NumPy (emulated)"
INSTALL_HINT = "the NumPy test backend is there only while a test registers it"
#: gemm() reads no arrays of this backend in place (it has buffers, no arrays): NumPy arrays
#: take the host path
ARRAY_LIBRARY = None
DEVICE_NAME = "NumPy Emulated TEST GPU"

#: a kernel argument list -> the milliseconds the launch is said to take
Body = Callable[[tuple[int, ...], Sequence[Any]], float]


# -- buffers ---------------------------------------------------------------------------------------
class DeviceBuffer(np.ndarray):
    """A buffer of this backend: a flat float32 NumPy array of a type of its own, so that
    gemm_buffers knows it as one (`EmulatedBuffers`) and gemm() never takes a plain NumPy array
    for one."""


def _new_buffer(values: np.ndarray) -> DeviceBuffer:
    return np.array(values, dtype=np.float32, copy=True).reshape(-1).view(DeviceBuffer)


def _grid(start: int, rows: int, cols: int, s0: int, s1: int) -> np.ndarray:
    """Element indices of a rows x cols matrix: (i, j) at start + i*s0 + j*s1."""
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(cols, dtype=np.int64)[None, :]
    return int(start) + i * int(s0) + j * int(s1)


def _checked(buf: Any, idx: np.ndarray, what: str) -> None:
    if not isinstance(buf, np.ndarray) or buf.dtype != np.float32 or buf.ndim != 1:
        raise LaunchError(f"{what}: not a buffer of this backend ({type(buf).__name__})")
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= buf.size):
        raise LaunchError(f"{what}: elements {int(idx.min())}..{int(idx.max())} of a buffer of "
                          f"{buf.size} (out of bounds)")


def _read(buf: Any, idx: np.ndarray, what: str) -> np.ndarray:
    _checked(buf, idx, f"read of {what}")
    return buf[idx]


def _write(buf: Any, idx: np.ndarray, values: np.ndarray, what: str) -> None:
    _checked(buf, idx, f"write of {what}")
    buf[idx] = values


def _covered(global_size: tuple[int, int], rows: int, cols: int) -> tuple[int, int]:
    """The rows and columns of a one-work-item-per-element kernel's output that the launch's
    global size reaches."""
    return min(rows, global_size[0]), min(cols, global_size[1])


# -- timing ----------------------------------------------------------------------------------------
def _occupancy(items: int) -> float:
    """A made-up fill of the device by work-groups of `items` work-items: best at 256."""
    return min(items, 256) / 256 / (1 + max(0, items - 256) / 256)


def _gemm_ms(m: int, n: int, k: int, number: int, local: tuple[int, int]) -> float:
    gflops = 1.0 + 10.0 * number * _occupancy(local[0] * local[1])
    return max(2.0 * m * n * k, 1.0) / (gflops * 1e6)


def _copy_ms(elements: int) -> float:
    return max(elements, 1) * 1e-6


# -- helper kernels (blas_helpers.cl, helpers.cl) --------------------------------------------------
def _pack(transpose: bool, per_item: int = 1) -> Body:
    """pack_copy or pack_transpose, whose work-items each move `per_item` values along out's
    columns (PACK_TILE / PACK_ROWS), as the epilogue's and the sum of slices' do."""
    def body(gsize: tuple[int, int], args: Sequence[Any]) -> float:
        rows, cols, out_rows, out_cols, x, offset, ld, out = args
        r, c = _covered((gsize[0], gsize[1] * per_item), out_rows, out_cols)
        block = np.zeros((r, c), dtype=np.float32)
        ri, ci = min(rows, r), min(cols, c)
        strides = (ld, 1) if transpose else (1, ld)  # out[i, j] = X[offset + j + i*ld] if T
        block[:ri, :ci] = _read(x, _grid(offset, ri, ci, *strides), "X")
        _write(out, _grid(0, r, c, 1, out_rows), block, "out")
        return _copy_ms(r * c)
    return body


def _epilogue(gsize: tuple[int, int], args: Sequence[Any], per_item: int = 1) -> float:
    m, n, alpha, p, ldp, use_p, beta, c, c_offset, ldc, read_c = args
    r, cc = _covered((gsize[0], gsize[1] * per_item), m, n)
    where = _grid(c_offset, r, cc, 1, ldc)
    value = np.zeros((r, cc), dtype=np.float32)
    if use_p:
        value = np.float32(alpha) * _read(p, _grid(0, r, cc, 1, ldp), "P")
    if read_c:
        value = value + np.float32(beta) * _read(c, where, "C")
    _write(c, where, value.astype(np.float32), "C")
    return _copy_ms(r * cc)


def _reduce_splits(gsize: tuple[int, ...], args: Sequence[Any], per_item: int = 1) -> float:
    m, n, splits, alpha, p, ldp, slice_p, beta, c, c_offset, ldc, read_c = args
    r, cc = _covered((gsize[0], gsize[1] * per_item), m, n)
    where = _grid(c_offset, r, cc, 1, ldc)
    total = np.zeros((r, cc), dtype=np.float32)
    for s in range(splits):  # in order, as the kernel sums them
        total = (total + _read(p, _grid(s * slice_p, r, cc, 1, ldp), "P")).astype(np.float32)
    value = np.float32(alpha) * total
    if read_c:
        value = value + np.float32(beta) * _read(c, where, "C")
    _write(c, where, value.astype(np.float32), "C")
    return _copy_ms(r * cc * splits)


def _transpose(gsize: tuple[int, int], args: Sequence[Any]) -> float:
    p, q, src, out = args  # out (Q x P) = in (P x Q)^T, both column-major
    r, c = _covered(gsize, p, q)
    _write(out, _grid(0, r, c, q, 1), _read(src, _grid(0, r, c, 1, p), "in"), "out")
    return _copy_ms(r * c)


def _pack_panels(panel: int) -> Body:
    def body(gsize: tuple[int, int], args: Sequence[Any]) -> float:
        rows, k, src, out = args
        r, c = _covered(gsize, rows, k)
        i = np.arange(r, dtype=np.int64)[:, None]
        j = np.arange(c, dtype=np.int64)[None, :]
        dst = ((i // panel) * k + j) * panel + i % panel
        _write(out, dst, _read(src, j * rows + i, "in"), "out")
        return _copy_ms(r * c)
    return body


def _pack_panels_pair(panel_a: int, panel_b: int, run: int) -> Body:
    def pack(blocks: int, panel: int, rows: int, cols: int, out_cols: int, x: Any, offset: int,
             ld: int, transposed: int, out: Any) -> int:
        """The blocks the launch reaches of one operand's panels (`run` columns of a panel
        each); returns how many floats they hold."""
        runs = -(-out_cols // run)
        panels = -(-blocks // runs)
        r, c = panels * panel, min(out_cols, runs * run)
        block = np.zeros((r, c), dtype=np.float32)
        ri, ci = min(rows, r), min(cols, c)
        strides = (ld, 1) if transposed else (1, ld)
        block[:ri, :ci] = _read(x, _grid(offset, ri, ci, *strides), "X")
        i = np.arange(r, dtype=np.int64)[:, None]
        j = np.arange(c, dtype=np.int64)[None, :]
        _write(out, ((i // panel) * out_cols + j) * panel + i % panel, block, "out")
        return r * c

    def body(gsize: tuple[int, ...], args: Sequence[Any]) -> float:
        *first, blocks_a = args[:9]
        *second, blocks_b = args[9:]
        reached = gsize[0]
        assert reached >= blocks_a + blocks_b, "the launch reaches every block"
        done = pack(blocks_a, panel_a, *first) + pack(blocks_b, panel_b, *second)
        return _copy_ms(done)
    return body


# -- the rungs and the direct kernel ---------------------------------------------------------------
def _panel_index(rows: int, k: int, panel: int) -> np.ndarray:
    """Where row r, column k of a rows x K matrix lies once packed into panels (pack_panels)."""
    i = np.arange(rows, dtype=np.int64)[:, None]
    j = np.arange(k, dtype=np.int64)[None, :]
    return ((i // panel) * k + j) * panel + i % panel


def _rung_operands(rung: Rung, params: Mapping[str, int], m: int, n: int, k: int, a: Any,
                   b: Any, padded: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """op(A) (M x K) and op(B) (K x N) as the rung reads them: A column-major M x K, and B
    column-major K x N, or BT column-major N x K for the rungs that take B transposed; with
    PANELS, A and BT packed into panels of TSM and TSN rows; with `padded` (the kernel for any
    size's PADDED_LD), the columns of A and BT whole vectors of WIDTH apart."""
    if params.get("PANELS"):
        op_a = _read(a, _panel_index(m, k, params["TSM"]), "A panels")
        return op_a, _read(b, _panel_index(n, k, params["TSN"]), "BT panels").T
    width = params["WIDTH"] if padded else 1
    lda, ldb = -(-m // width) * width, -(-n // width) * width
    op_a = _read(a, _grid(0, m, k, 1, lda), "A")
    if rung.transposed_b:
        return op_a, _read(b, _grid(0, k, n, ldb, 1), "BT")
    return op_a, _read(b, _grid(0, k, n, 1, k), "B")


def _rung(rung: Rung, params: Mapping[str, int], padded: bool = False) -> Body:
    def body(gsize: tuple[int, int], args: Sequence[Any]) -> float:
        m, n, k, a, b, c = args
        why = None if rung.any_size else rung.size_problem(params, m, n, k)
        if why:
            raise LaunchError(f"rung {rung.number} cannot do M={m} N={n} K={k}: {why} (its "
                              f"loads and stores would leave the matrices)")
        tm, tn = rung.output_tile(params)
        local = rung.local_size(params)
        groups = (gsize[0] // local[0], gsize[1] // local[1])
        rows, cols = min(m, groups[0] * tm), min(n, groups[1] * tn)
        op_a, op_b = _rung_operands(rung, params, m, n, k, a, b, padded)
        product = (op_a[:rows] @ op_b[:, :cols]).astype(np.float32)
        _write(c, _grid(0, rows, cols, 1, m), product, "C")
        return _gemm_ms(m, n, k, rung.number, local)
    return body


def _direct(params: Mapping[str, int]) -> Body:
    trans_a, trans_b = bool(params["TRANS_A"]), bool(params["TRANS_B"])
    batched = bool(params.get("BATCHED", 0))
    tuned = {p: v for p, v in params.items() if p not in ("TRANS_A", "TRANS_B", "BATCHED")}

    def body(gsize: tuple[int, ...], args: Sequence[Any]) -> float:
        m, n, k, alpha, beta, a, a_off, lda, b, b_off, ldb, c, c_off, ldc = args[:14]
        strides = args[14:] if batched else (0, 0, 0)
        if len(strides) != 3:
            raise LaunchError("gemm_direct: BATCHED takes three strides after ldc")
        tm, tn = DIRECT.output_tile(tuned)
        local = DIRECT.local_size(tuned)
        rows = min(m, gsize[0] // local[0] * tm)
        cols = min(n, gsize[1] // local[1] * tn)
        for p in range(gsize[2] if batched and len(gsize) > 2 else 1):
            pa, pb, pc = (off + p * st for off, st in zip((a_off, b_off, c_off), strides))
            op_a = _read(a, _grid(pa, rows, k, *((lda, 1) if trans_a else (1, lda))), "A")
            op_b = _read(b, _grid(pb, k, cols, *((ldb, 1) if trans_b else (1, ldb))), "B")
            acc = (op_a @ op_b).astype(np.float32)
            where = _grid(pc, rows, cols, 1, ldc)
            value = np.float32(alpha) * acc
            if np.float32(beta) != 0:  # tested at run time: with beta == 0, C is never read
                value = value + np.float32(beta) * _read(c, where, "C")
            _write(c, where, value.astype(np.float32), "C")
        return _gemm_ms(m, n, k, DIRECT.number, local)
    return body


# -- building --------------------------------------------------------------------------------------
class EmulatedKernel:
    """A built kernel: its emulation and the work-group size the kernel requires, if any."""

    def __init__(self, name: str, body: Body, required: tuple[int, int] | None):
        self.name = name
        self.body = body
        self.required = required

    def run(self, device: DeviceInfo, global_size: Sequence[int], local_size: Sequence[int],
            args: Sequence[Any]) -> float:
        gsize = tuple(int(g) for g in global_size)
        local = tuple(int(lc) for lc in local_size)
        if len(local) > 2 and local[2] != 1:
            raise LaunchError(f"{self.name}: local size {local} spans the third dimension")
        local = local[:2]
        if self.required is not None and local != self.required:
            raise LaunchError(f"{self.name}: local size {local}, but the kernel requires "
                              f"{self.required}")
        if any(lc <= 0 or g % lc for g, lc in zip(gsize, local)):
            raise LaunchError(f"{self.name}: global size {gsize} is not a multiple of the local "
                              f"size {local}")
        if math.prod(local) > device.max_work_group_size:
            raise LaunchError(f"{self.name}: work-group of {math.prod(local)} work-items, "
                              f"more than the device's {device.max_work_group_size}")
        return self.body(gsize, args)


def _params(rung: Rung, defines: Mapping[str, int]) -> dict[str, int]:
    """The macros a kernel file would end up with: the defines over its own defaults; the
    combinations its #error lines refuse are build errors."""
    params = {**rung.defaults(), **{k: int(v) for k, v in defines.items()
                                    if k in rung.param_names()}}
    bad = rung.first_violation(params, None, stages=("divisibility",))
    if bad is not None:
        raise BuildError(f"build failed: {rung.kernel}: #error {bad.name}")
    return params


def _helper_kernel(kernel: str, defines: Mapping[str, int]) -> EmulatedKernel | None:
    tile = int(defines.get("PACK_TILE", 16))
    rows = int(defines.get("PACK_ROWS", tile))
    trx, try_ = int(defines.get("TRX", 16)), int(defines.get("TRY", 16))
    helpers: dict[str, tuple[Body, tuple[int, int] | None]] = {
        "pack_copy": (_pack(False, tile // rows), (tile, rows)),
        "pack_transpose": (_pack(True, tile // rows), (tile, rows)),
        "epilogue": (functools.partial(_epilogue, per_item=tile // rows), (tile, rows)),
        "reduce_splits": (functools.partial(_reduce_splits, per_item=tile // rows),
                          (tile, rows)),
        "transpose": (_transpose, (trx, try_)),
        "pack_panels": (_pack_panels(int(defines.get("PANEL", 128))), None),
        "pack_panels_pair": (_pack_panels_pair(int(defines.get("PANEL_A", 128)),
                                               int(defines.get("PANEL_B", 128)),
                                               int(defines.get("PANEL_RUN", 64))), None),
    }
    found = helpers.get(kernel)
    return None if found is None else EmulatedKernel(kernel, *found)


def emulate(kernel: str, defines: Mapping[str, int]) -> EmulatedKernel:
    """The emulation of a kernel of clgemm/kernels/ by its name, built with these macros."""
    define_options(defines)  # the same refusal of bad macros as the real backends
    helper = _helper_kernel(kernel, defines)
    if helper is not None:
        return helper
    if kernel == DIRECT.kernel:
        params = {**_params(DIRECT, defines), "TRANS_A": int(defines.get("TRANS_A", 0)),
                  "TRANS_B": int(defines.get("TRANS_B", 0)),
                  "BATCHED": int(defines.get("BATCHED", 0))}
        tuned = {p: v for p, v in params.items() if p not in ("TRANS_A", "TRANS_B", "BATCHED")}
        return EmulatedKernel(kernel, _direct(params), DIRECT.local_size(tuned))
    rung = next((r for r in ALL_RUNGS.values() if r.kernel == kernel), None)
    if rung is None:
        raise BuildError(f"build failed: the NumPy test backend has no emulation of {kernel!r}")
    params = _params(rung, defines)
    padded = bool(int(defines.get("PADDED_LD", 0)))
    return EmulatedKernel(kernel, _rung(rung, params, padded), rung.local_size(params))


# -- the backend -----------------------------------------------------------------------------------
class NumpyBackend(Backend):
    name = NAME

    def __init__(self, device: DeviceInfo):
        self.device = device
        #: every kernel built, by name, in order (tests look at what ran)
        self.built: list[str] = []
        #: every launch, as (kernel name, global size, local size)
        self.launches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []

    def header(self) -> str:
        return ""

    def build(self, source: str, defines: Mapping[str, int], kernel: str) -> EmulatedKernel:
        if f"void {kernel}(" not in source and f"void {kernel} (" not in source:
            raise BuildError(f"build failed: the source defines no kernel {kernel!r}")
        knl = emulate(kernel, defines)
        self.built.append(kernel)
        return knl

    def to_device(self, host: np.ndarray) -> DeviceBuffer:
        return _new_buffer(host)

    def alloc(self, count: int) -> DeviceBuffer:
        return _new_buffer(np.full(max(1, count), np.nan, dtype=np.float32))

    def fill(self, buf: Any, value: float, count: int) -> None:
        buf[:count] = value

    def to_host(self, buf: Any, count: int) -> np.ndarray:
        return np.array(buf[:count], dtype=np.float32, copy=True)

    def launch(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
               args: Sequence[Any]) -> float:
        if not isinstance(kernel, EmulatedKernel):
            raise LaunchError(f"not a kernel of this backend: {type(kernel).__name__}")
        self.launches.append((kernel.name, tuple(global_size), tuple(local_size)))
        return kernel.run(self.device, global_size, local_size, args)

    def enqueue(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Any], queue: Any = None, wait_for: Sequence[Any] | None = None
                ) -> Any:
        ms = self.launch(kernel, global_size, local_size, args)
        log: LaunchLog | None = self._logged()
        if log is not None:
            log.add(kernel, ms)
        return None

    def elapsed_ms(self, record: Any) -> float:
        return float(record)


# -- its vendor BLAS -------------------------------------------------------------------------------
class EmulatedBlas(VendorBlas):
    """A stand-in vendor SGEMM (NumPy's matmul at a made-up rate), so the ladder's reference
    rows run on this backend too. Its name must not start with "NumPy": that is the host row."""

    key = "emublas"
    name = "EmuBLAS (NumPy, made-up times)"
    label = "EmuBLAS"

    def missing(self) -> str | None:
        return None

    def timed_sgemm(self, backend: Backend, m: int, n: int, k: int, a: Any, b: Any,
                    c: Any) -> TimedCall:
        def run() -> float:
            op_a = _read(a, _grid(0, m, k, 1, m), "A")
            op_b = _read(b, _grid(0, k, n, 1, k), "B")
            _write(c, _grid(0, m, n, 1, m), (op_a @ op_b).astype(np.float32), "C")
            return _gemm_ms(m, n, k, 20, (16, 16))
        return TimedCall(run, {"label": "made-up rate"})

    def matmul(self, backend: Backend, a: Any, b: Any, out: Any = None) -> Any:
        raise UsageError("the NumPy test backend has no device arrays")


VENDOR = EmulatedBlas()


# -- its buffers, for gemm_buffers -----------------------------------------------------------------
class EmulatedBuffers(DeviceArrays):
    """The backend's buffers as gemm_buffers takes them (with offsets, leading dimensions and
    row-major order, which gemm() on NumPy arrays never passes to the device). There are no
    device arrays: NumPy arrays go gemm()'s host path."""

    backend = NAME
    label = "NumPy test backend"
    array_type = "numpy_backend.DeviceBuffer"

    def __init__(self, lookups: Lookups):
        self.lookups = lookups

    def is_array(self, x: Any) -> bool:
        return False

    def is_buffer(self, x: Any) -> bool:
        return isinstance(x, DeviceBuffer)

    def check_buffer(self, name: str, x: Any) -> None:
        if x.dtype != np.float32 or x.ndim != 1:
            raise UsageError(f"{name} must be a flat float32 buffer of this backend")

    def floats(self, x: Any) -> int:
        return int(x.size)

    def buffers_backend(self, named: Any, queue: Any, backend: Backend | None) -> Backend:
        if queue is not None:
            raise UsageError("the NumPy test backend has no queues (leave queue out)")
        if backend is not None:
            return backend
        device = next(d for d in self.lookups.devices() if d.backend == NAME)
        return self.lookups.shared(device)

    def buffers_queue(self, backend: Backend, queue: Any) -> Any:
        return None

    def memory_range(self, buf: Any, offset: int, count: int) -> tuple[Any, int, int]:
        start = int(buf.__array_interface__["data"][0]) + 4 * offset
        return NAME, start, start + 4 * count

    def _no_arrays(self, *args: Any) -> Any:
        raise UsageError("the NumPy test backend has no device arrays")

    in_place = buffer_of = backend_for = queue_for = empty = upload = download = _no_arrays


# -- what the registry asks of a backend package ---------------------------------------------------
def device_arrays(lookups: Lookups) -> DeviceArrays | None:
    return EmulatedBuffers(lookups)


#: how many identical devices the backend lists: $CLGEMM_TEST_DEVICES, else one. Several stand
#: for a machine with several GPUs of one model (one key, one database)
COUNT_VARIABLE = "CLGEMM_TEST_DEVICES"


def discover() -> list[DeviceInfo]:
    """Devices with made-up but plausible limits, of a type of its own ("GPU" for the
    library's choices, named TEST) so that one is never the default CPU device."""
    return [DeviceInfo(
        index=-1, backend=NAME, platform="NumPy emulation", name=DEVICE_NAME, type="GPU",
        vendor="clgemm tests", compute_units=8, clock_mhz=1000, global_mem_bytes=1 << 30,
        local_mem_bytes=48 * 1024, max_work_group_size=1024,
        max_work_item_sizes=(1024, 1024, 64), max_alloc_bytes=1 << 28, driver_version="1.0",
        version="NumPy " + np.__version__, handle=ordinal)
        for ordinal in range(int(os.environ.get(COUNT_VARIABLE, "1")))]


def open_backend(device: DeviceInfo) -> NumpyBackend:
    return NumpyBackend(device)


def open_shared(device: DeviceInfo) -> NumpyBackend:
    return NumpyBackend(device)


def versions() -> dict[str, object]:
    return {}

