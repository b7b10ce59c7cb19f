"""The small interface every backend implements; the runner needs nothing else. A backend
package describes itself by `BackendPackage`, and joins clgemm by one `registry.register`."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterator, Mapping, Protocol, Sequence

import numpy as np

from clgemm.core.errors import UsageError
from clgemm.core.kernel_sources import kernel_source
from clgemm.core.validation import is_int, is_macro_name
from clgemm.devices.info import DeviceInfo

#: the widest vector the kernels read through a vector pointer, in bytes (the tiled kernels'
#: WIDTH = 8); CUDA faults on a vector load off its own size, and so does a CPU through PoCL
#: on the caller's own memory
VECTOR_BYTES = 32


def off_the_vectors(ptr: int, size: int) -> bool:
    """Whether a non-empty array starting at address `ptr` starts off the kernels' vectors."""
    return bool(size) and ptr % VECTOR_BYTES != 0

#: a kernel argument: an int (passed as a 32-bit int) or a buffer from `to_device`/`alloc`
Arg = Any


class LaunchLog:
    """The launches queued while it is open, each as (kernel name, timing record); `times()`
    after the work is done gives (kernel name, milliseconds) from the backend's device clock."""

    def __init__(self, backend: "Backend"):
        self.backend = backend
        self.records: list[tuple[str, Any]] = []

    def __enter__(self) -> "LaunchLog":
        self.backend.__dict__["_log"] = self
        return self

    def __exit__(self, *exc: Any) -> None:
        self.backend.__dict__.pop("_log", None)

    def add(self, knl: Any, record: Any) -> None:
        self.records.append((self.backend.kernel_name(knl), record))

    def times(self) -> list[tuple[str, float]]:
        return [(name, self.backend.elapsed_ms(record)) for name, record in self.records]


def define_options(defines: Mapping[str, int]) -> list[str]:
    """The `-DNAME=VALUE` options of `defines`, each checked: the last defence against a
    parameter read from a file that would add or redefine compiler options."""
    for name, value in defines.items():
        if not is_macro_name(name):
            raise UsageError(f"refusing to build: macro name {name!r} is not a C identifier")
        if not is_int(value):
            raise UsageError(f"refusing to build: macro {name}={value!r} is not an integer")
    return [f"-D{name}={int(value)}" for name, value in defines.items()]


class Backend(ABC):
    name: str
    device: DeviceInfo
    #: most work-groups a launch may have along each dimension, where the API limits it (CUDA's
    #: grid); None where only the global size's type does (OpenCL)
    max_groups: tuple[int, int, int] | None = None

    @abstractmethod
    def header(self) -> str:
        """Source text placed before every kernel (empty for OpenCL, cl2cuda.h for CUDA)."""

    @abstractmethod
    def build(self, source: str, defines: Mapping[str, int], kernel: str) -> Any:
        """Compile `source` with `-D` macros; return a launchable kernel. Raises BuildError.
        Builds are cached per (source, defines, kernel) for the backend's lifetime."""

    @abstractmethod
    def to_device(self, host: np.ndarray) -> Any:
        """Copy a contiguous float32 array into a new device buffer."""

    def host_buffer(self, host: np.ndarray, writable: bool, align: int = 4) -> Any | None:
        """A buffer that is the contiguous float32 array `host` itself, where the device works
        in host memory (a CPU): no copy in, and with `writable`, no copy out (`sync_host`).
        None where a buffer cannot be the host's memory (the default), or where `host` does
        not start on a multiple of `align` bytes: a kernel that reads vectors through vector
        pointers is compiled to aligned loads, which fault on a CPU at any other address."""
        return None

    def host_address(self, buf: Any) -> int | None:
        """The host address a kernel reads `buf` at, where that is the caller's own memory (a
        CPU's buffer made over a host array): the caller chose it, so it may start off the
        kernels' vectors. None where the driver placed the buffer (on its own alignment)."""
        return None

    def copy_buffer(self, dst: Any, src: Any, nbytes: int, queue: Any,
                    wait_for: list[Any] | None) -> Any:
        """Queue a copy of `src`'s first `nbytes` bytes into `dst`; its event, if any."""
        raise NotImplementedError(f"the {self.name} backend copies no buffers")

    def sync_host(self, buf: Any, host: np.ndarray) -> None:
        """Once the work queued before is done, make `host` hold what the kernels wrote into
        its `host_buffer`."""
        raise NotImplementedError(f"the {self.name} backend has no host buffers")

    @abstractmethod
    def alloc(self, count: int) -> Any:
        """A new device buffer of `count` float32 values (contents undefined)."""

    @abstractmethod
    def fill(self, buf: Any, value: float, count: int) -> None:
        """Set the first `count` float32 values of `buf` (used to poison outputs with NaN)."""

    @abstractmethod
    def to_host(self, buf: Any, count: int) -> np.ndarray:
        """The first `count` float32 values of `buf` as a new host array."""

    @abstractmethod
    def launch(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
               args: Sequence[Arg]) -> float:
        """Run one launch to completion; return its device time in milliseconds (from device
        events, so host overhead is excluded). Raises LaunchError."""

    def program(self, filename: str, defines: Mapping[str, int], kernel: str) -> Any:
        """A kernel of one of the project's files, built once and then found by file, kernel and
        macros alone: the library path asks for its kernels on every call, and reading and
        hashing the source each time would cost more than a small product's launches."""
        cache = self.__dict__.setdefault("_programs", {})
        key = (filename, kernel, tuple(defines.items()))
        knl = cache.get(key)
        if knl is None:
            knl = cache[key] = self.build(kernel_source(self.header(), filename), defines, kernel)
            self.__dict__.setdefault("_names", {})[id(knl)] = kernel
        return knl

    def kernel_name(self, knl: Any) -> str:
        """The name of a kernel `program` built (for a launch log)."""
        return self.__dict__.get("_names", {}).get(id(knl), "?")

    def observe(self) -> "LaunchLog":
        """A launch log for measuring code: while it is open, every `enqueue` also records a
        timing event of its launch (OpenCL: the launch's event; CUDA: events around it). The
        library path pays one attribute test per launch for this, nothing when no log is open."""
        return LaunchLog(self)

    @contextmanager
    def unobserved(self) -> Iterator[None]:
        """Launches that are not the caller's (a configuration's trial before its first call)
        kept out of an open launch log."""
        log = self.__dict__.pop("_log", None)
        try:
            yield
        finally:
            if log is not None:
                self.__dict__["_log"] = log

    def _logged(self) -> "LaunchLog | None":
        return self.__dict__.get("_log")

    def enqueue(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Arg], queue: Any = None, wait_for: Sequence[Any] | None = None
                ) -> Any:
        """Queue one launch and return without waiting, as the array libraries' own operations
        do: the library path. Work is ordered on `queue` (OpenCL: a command queue of the
        backend's context, by default its own; CUDA: the current stream), and starts only once
        the events of `wait_for` are complete, which is what orders it after work on other
        queues, after events the caller holds back, and on an out-of-order queue after
        anything at all. Returns the launch's event where the backend has events (OpenCL), else
        None. Timing belongs to `launch`, which the measuring code uses. Raises LaunchError. A
        backend without queues runs the launch to completion."""
        self.launch(kernel, global_size, local_size, args)
        return None

    def prepare(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Arg], slots: Sequence[int]) -> "PreparedLaunch":
        """One launch of the library path made ready once for the many calls that repeat it:
        everything but the arguments at `slots` (the buffers a call brings) is known. A
        backend overrides this where its API has a cheaper way to queue a launch than
        `enqueue` with the whole argument list; this one is `enqueue`."""
        return PreparedLaunch(self, kernel, global_size, local_size, args, slots)

    def wait_list(self, wait_for: Any) -> list[Any]:
        """The caller's `wait_for` argument as a list of this backend's events, refused (with
        ArgumentTypeError or UsageError) when it is anything else, before anything runs."""
        if wait_for is None:
            return []
        raise UsageError(f"the {self.name} backend has no events to wait for; leave wait_for "
                         f"out")

    def in_order(self, queue: Any) -> bool:
        """Whether work on `queue` runs in the order it was queued. Only an OpenCL queue made
        with OUT_OF_ORDER_EXEC_MODE_ENABLE does not; there every launch must name the events
        it depends on."""
        return True

    def marker(self, queue: Any) -> Any:
        """An event that completes once everything queued on `queue` before it has (an OpenCL
        marker with an empty wait list); None where queue order already says as much."""
        return None

    def elapsed_ms(self, record: Any) -> float:
        """Device time of one logged launch, once it has finished."""
        raise NotImplementedError

    def scratch(self, count: int, queue: Any = None) -> Any:
        """A temporary buffer of `count` float32 values from a memory pool, so repeated calls of
        one shape allocate nothing: it goes back to the pool when dropped, and work queued on
        the same `queue` after that may reuse it, which in-order queues make safe (on an
        out-of-order queue the caller orders its writes after a `marker`)."""
        return self.alloc(count)

    def activate(self) -> ContextManager:
        """A context in which this backend's device is the one that allocations and launches
        go to, the previous one restored after. An OpenCL context names its device in every
        call, so nothing is needed there; CUDA has a current device per thread, which a caller
        with several GPUs may have set to another."""
        return nullcontext()

    def current_stream(self) -> Callable[[], Any] | None:
        """Where `queue=None` puts work now, for a backend whose calls go to an ambient stream
        that the caller may change between calls (CUDA's current stream): a cheap function
        telling which one it is on this backend's device, whichever device is current, so that
        buffers kept for one stream are used on no other. None where the queue a call names is
        where its work goes."""
        return None

    def already_active(self) -> Callable[[], bool] | None:
        """A cheap test of whether this backend's device is active already, so that a repeated
        call enters `activate` only when it is not; None where activating does nothing."""
        return None

    def release(self) -> None:
        """Free what the backend holds (optional)."""

    def synchronize(self) -> None:
        """Wait for all work queued on the backend's own queue (OpenCL) or on the current
        stream (CUDA): what a caller does before reading a result or stopping a clock."""

    def trim(self) -> None:
        """Give cached device memory back to the device (between a bench's shapes, so one
        shape's pooled buffers do not crowd out the next's); a backend without a cache has
        nothing to give."""

    @property
    def lock(self) -> threading.Lock:
        """Serialises the library path's launches on this backend: kernel objects are shared
        between threads, and setting their arguments then launching is not atomic."""
        lock = self.__dict__.get("_lock")  # on every call of the library path: no new Lock
        return lock if lock is not None else self.__dict__.setdefault("_lock", threading.Lock())


# -- arrays ------------------------------------------------------------------------------------
Named = Sequence[tuple[str, Any]]


class PreparedLaunch:
    """A launch whose kernel, geometry and arguments but the buffers at `slots` are fixed:
    called with those buffers (in `slots` order), a queue and the events to wait for, it
    queues the launch as `Backend.enqueue` would and returns its event (or None)."""

    def __init__(self, backend: Backend, kernel: Any, global_size: Sequence[int],
                 local_size: Sequence[int], args: Sequence[Arg], slots: Sequence[int]):
        self.backend, self.kernel = backend, kernel
        self.global_size, self.local_size = tuple(global_size), tuple(local_size)
        self.args, self.slots = list(args), tuple(slots)

    def __call__(self, buffers: Sequence[Any], queue: Any,
                 wait_for: Sequence[Any] | None) -> Any:
        args = list(self.args)
        for i, buf in zip(self.slots, buffers):
            args[i] = buf
        return self.backend.enqueue(self.kernel, self.global_size, self.local_size, args, queue,
                                    wait_for=wait_for or None)

    def queue_only(self, buffers: Sequence[Any], queue: Any,
                   wait_for: Sequence[Any] | None) -> None:
        """The same launch where nothing will ever wait for it by itself: on an in-order queue,
        every launch but a call's last, which the last one's event covers. A backend whose
        events cost time to make leaves it out here."""
        self(buffers, queue, wait_for)


@dataclass
class Mat:
    """A column-major matrix in a device buffer: element (i, j) of the stored matrix is
    buf[offset + i + j*ld]; op(X) is the stored matrix, transposed when `trans`."""

    buf: Any
    offset: int
    ld: int
    trans: bool


@dataclass
class Operand:
    """How one array reaches the device: a buffer (existing or still to upload) seen as a
    column-major stored matrix, `c_order` meaning the stored matrix is the array transposed."""

    name: str
    array: Any
    c_order: bool
    ld: int
    offset: int = 0
    buf: Any = None

    def mat(self, trans: bool) -> Mat:
        return Mat(self.buf, self.offset, self.ld, trans != self.c_order)


def host_operand(name: str, x: np.ndarray, prefer_c: bool) -> Operand:
    """Contiguous arrays are used as they lie (C order read as the transpose); strided views are
    copied later, after the memory check, into the order that spares the device a transpose."""
    r, c = x.shape
    if x.flags.f_contiguous:
        return Operand(name, x, False, max(1, r))
    if x.flags.c_contiguous:
        return Operand(name, x, True, max(1, c))
    return Operand(name, x, prefer_c, max(1, c) if prefer_c else max(1, r))


def strided_operand(name: str, x: Any, buf: Any, offset: int, label: str) -> Operand:
    """A device array read in place: any view whose rows or columns are contiguous is a matrix
    with a leading dimension, which the pack kernels read directly. Strides are in bytes."""
    r, c = x.shape
    if r * c == 0:
        return Operand(name, x, False, max(1, r), offset, buf)
    s0, s1 = x.strides
    if (r == 1 or s0 == 4) and (c == 1 or (s1 % 4 == 0 and s1 // 4 >= r)):
        return Operand(name, x, False, max(1, r) if c == 1 else s1 // 4, offset, buf)
    if (c == 1 or s1 == 4) and (r == 1 or (s0 % 4 == 0 and s0 // 4 >= c)):
        return Operand(name, x, True, max(1, c) if r == 1 else s0 // 4, offset, buf)
    raise UsageError(f"{name} is a {label} view with strides {tuple(x.strides)} bytes that gemm "
                     f"cannot read in place: one of the strides must be 4 (contiguous rows or "
                     f"columns) and the other a positive multiple of 4 spanning the matrix; make "
                     f"a contiguous copy first")


class DeviceArrays(ABC):
    """The arrays (and buffers) of one backend's array library."""

    #: the backend the arrays live on
    backend: str
    #: the library's name, as messages say it ("a CuPy array")
    label: str
    #: the array type, as messages say it
    array_type: str
    #: whether arrays carry events of their pending work (`events`, `replace_events`), which a
    #: call must wait for and add to; where they do not, a repeated call need not ask
    has_events: bool = False

    @abstractmethod
    def is_array(self, x: Any) -> bool:
        """Whether `x` is one of this library's arrays."""

    @abstractmethod
    def in_place(self, name: str, x: Any) -> Operand:
        """The 2-D array `x` as an operand read where it lies; a view it cannot read is refused."""

    def readable(self, x: Any) -> Any:
        """The operand `x` (A or B) as the kernels may read it: the array itself, or a copy
        where the kernels would read it at an address their vector loads cannot take. The
        default: the array (an operand's offset then says where it starts, and the plan packs
        one that does not start at its buffer's start)."""
        return x

    @abstractmethod
    def buffer_of(self, x: Any) -> tuple[Any, int]:
        """The buffer and element offset of a contiguous array this module made (a new C)."""

    @abstractmethod
    def backend_for(self, named: Named, info: DeviceInfo | None,
                    backend: Backend | None) -> Backend:
        """The backend that can use all of these arrays where they are, checked against the
        device or backend the caller asked for, if any."""

    @abstractmethod
    def queue_for(self, backend: Backend, named: Named) -> Any:
        """Where the call's launches go so that they follow the work the caller queued on the
        arrays without waiting for it: the arrays' own queue (OpenCL) or the current stream
        (CUDA, None). Only work on some other queue is waited for."""

    def steady_queue(self, backend: Backend, named: Named) -> tuple[bool, Any]:
        """(True, the queue) where every call with arrays of these arrays' signatures runs on
        the queue `queue_for` gives now, with nothing to do first, so that a repeated call
        need not ask again; (False, None) where it must. The signature names each array's
        queue, so one queue for all of them stays the one."""
        return True, self.queue_for(backend, named)

    @abstractmethod
    def empty(self, backend: Backend, named: Named, shape: tuple[int, ...]) -> Any:
        """A new C-ordered float32 array beside the operands (under `backend.activate()`)."""

    def events(self, x: Any) -> list[Any]:
        """The events of work still pending on the array that a launch reading or writing it
        must wait for (pyopencl's `Array.events`); none where the stream orders everything
        (CuPy)."""
        return []

    def add_event(self, x: Any, event: Any) -> None:
        """Record that `event` writes the array, so that whoever uses it next waits for it
        (pyopencl's `Array.add_event`); nothing where the stream orders everything."""

    def replace_events(self, x: Any, event: Any) -> None:
        """Record that `event` writes the array after waiting for every event the array held:
        the event alone then stands for all of them. A repeated call into one C would otherwise
        make its list grow and hand the whole list to every launch."""
        self.add_event(x, event)

    @abstractmethod
    def memory_range(self, buf: Any, offset: int, count: int) -> tuple[Any, int, int]:
        """Where `count` floats from element `offset` of an operand's buffer lie: (the memory
        they belong to, first byte, byte past the last). Two ranges overlap only when the
        memory is the same and the byte ranges meet, however each buffer was made (a view, an
        OpenCL sub-buffer, an alias of a CuPy array)."""

    # -- raw buffers (gemm_buffers) --
    @abstractmethod
    def is_buffer(self, x: Any) -> bool:
        """Whether `x` is a buffer `gemm_buffers` takes on this backend."""

    def check_buffer(self, name: str, x: Any) -> None:
        """Refuse a buffer of this kind that `gemm_buffers` cannot address (default: none)."""

    @abstractmethod
    def floats(self, x: Any) -> int:
        """How many float32 values the buffer holds."""

    @abstractmethod
    def buffers_backend(self, named: Named, queue: Any, backend: Backend | None) -> Backend:
        """The backend for these buffers, from the buffers, the queue or the backend passed."""

    @abstractmethod
    def buffers_queue(self, backend: Backend, queue: Any) -> Any:
        """Where gemm_buffers' launches go: the caller's queue, else the backend's own."""

    # -- test data (clgemm verify) --
    @abstractmethod
    def upload(self, backend: Backend, host: np.ndarray) -> Any:
        """A device copy of a host array, in the same memory order."""

    @abstractmethod
    def download(self, x: Any) -> np.ndarray:
        """A host copy of a device array."""

    def kernel_arg(self, x: Any) -> Any:
        """What a launch binds for the array `x` read where it lies, at the element offset its
        `signature` fixes: the repeated call's way in, which builds no operand. The default
        builds one (correct, only slower)."""
        return self.in_place("x", x).buf

    def allocation(self, x: Any) -> Any:
        """What the array's memory was allocated as, such that arrays of two different
        allocations never share memory: a repeated call whose C has an allocation of its own
        need not measure where its operands lie. None: not known (always measured)."""
        return None

    # -- the registry's view --
    def signature(self, x: Any) -> tuple | None:
        """What a gemm() call's checks and backend depend on for the array `x` of this kind:
        calls whose arrays have equal signatures (and equal other arguments) can reuse the
        checks made once. None: never reuse them (the default, always correct, only slower)."""
        return None

    def basis(self, x: Any) -> tuple:
        """What the array `x`'s `signature` is made of, as `x` holds it now: while `same_basis`
        finds `x` holding the same, its signature is unchanged, so a call repeated on the very
        same arrays need not make its key again (`library.same_call`). The default is the
        signature itself, compared by value: correct, and no faster than the key."""
        return (self.signature(x),)

    def same_basis(self, x: Any, basis: tuple) -> bool:
        """Whether `x` still has the signature it had when `basis` was taken of it."""
        return (self.signature(x),) == basis

    def adopt(self, backend: Backend) -> None:
        """Told of every backend the registry opens for the process, so that arrays which live
        where that backend runs (its OpenCL context, say) are run by it rather than by a second
        backend of their own, with builds of its own."""

    def forget(self, backends: bool) -> None:
        """Drop what the adapter remembers of devices (and with `backends`, the backends it
        opened or adopted): the registry's `clear`."""


# -- vendor BLAS -------------------------------------------------------------------------------
class TimedCall:
    """One timed launch: calling it runs the launch to completion and returns its time in
    milliseconds. `timing["label"]` says how it was timed; the call itself may change it to
    "host wall time" where the device cannot time it."""

    def __init__(self, run: Callable[[], float], timing: dict[str, str]):
        self.run = run
        self.timing = timing

    def __call__(self) -> float:
        return self.run()


class VendorBlas(ABC):
    """The vendor SGEMM of one backend, as the measuring code compares against it: found or not,
    and one timed column-major C := A B on the backend's own buffers."""

    #: short key in results ("clblast", "cublas")
    key: str
    #: the name tables print
    name: str
    #: the short name results and call benches use ("CLBlast", "cuBLAS")
    label: str

    @abstractmethod
    def missing(self) -> str | None:
        """Why the library cannot be used here, or None when it can."""

    @abstractmethod
    def timed_sgemm(self, backend: "Backend", m: int, n: int, k: int, a: Any, b: Any,
                    c: Any) -> TimedCall:
        """A timed call of C := A B on tight column-major buffers of the backend."""

    @abstractmethod
    def matmul(self, backend: "Backend", a: Any, b: Any, out: Any = None) -> Any:
        """A @ B on C-ordered arrays of the backend's array library, called as a user of that
        library calls it (queued, not waited for); into `out` when given, else a new array."""

    def override(self, backend: "Backend", params: Mapping[str, int]) -> None:
        """Make the library use these tuned parameters from now on in this process."""
        raise UsageError(f"{self.name} takes no tuned parameters from clgemm")


# -- a backend package, as the registry sees it --------------------------------------------------
@dataclass(frozen=True)
class Lookups:
    """What the registry lends a backend's array adapter: the adapters sit below the registry,
    so they get its lookups as arguments rather than importing it."""

    #: the process-wide backend of a listed device (opened on first use)
    shared: Callable[[DeviceInfo], Backend]
    #: every listed device of every registered backend, numbered
    devices: Callable[[], list[DeviceInfo]]


class BackendPackage(Protocol):
    """Everything clgemm needs to know of a backend, so that adding one is its package plus one
    `registry.register(package)`: a module defining these names (as `backends/opencl/` and
    `backends/cuda/` do) is one. Read-only members, so that a module's plain constants fit."""

    @property
    def NAME(self) -> str:
        """The backend's name: `--backend`, `DeviceInfo.backend`, result files ("opencl")."""

    @property
    def LABEL(self) -> str:
        """How text for people names it ("OpenCL")."""

    @property
    def INSTALL_HINT(self) -> str:
        """What to install when it finds no device."""

    @property
    def ARRAY_LIBRARY(self) -> str | None:
        """The name of the array library whose arrays gemm() reads in place ("pyopencl"), also
        the name of clgemm verify's path through them; None for a backend without one."""

    @property
    def VENDOR(self) -> VendorBlas:
        """The vendor SGEMM the backend is compared with."""

    def device_arrays(self, lookups: Lookups) -> DeviceArrays | None:
        """The adapter of the backend's array library (None without one)."""

    def discover(self) -> list[DeviceInfo]:
        """The backend's devices (index -1: the registry numbers them); none, not an error,
        where its runtime is missing."""

    def open_backend(self, device: DeviceInfo) -> Backend:
        """A new backend of its own for a measuring command."""

    def open_shared(self, device: DeviceInfo) -> Backend:
        """The backend the registry keeps for the whole process."""

    def versions(self) -> Mapping[str, object]:
        """The versions of the backend's libraries, for provenance."""
