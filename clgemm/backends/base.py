"""The small interface every backend implements; the runner needs nothing else."""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import nullcontext
from typing import Any, ContextManager, Mapping, Sequence

import numpy as np

from ..devices import DeviceInfo
from ..errors import UsageError
from ..sources import kernel_source
from ..values import is_int, is_macro_name

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

    def _logged(self) -> "LaunchLog | None":
        return self.__dict__.get("_log")

    def enqueue(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Arg], queue: Any = None) -> None:
        """Queue one launch and return without waiting, as the array libraries' own operations
        do: the library path. Work is ordered on `queue` (OpenCL: a command queue of the
        backend's context, by default its own; CUDA: the current stream). Timing belongs to
        `launch`, which the measuring code uses. Raises LaunchError. A backend without queues
        runs the launch to completion."""
        self.launch(kernel, global_size, local_size, args)

    def elapsed_ms(self, record: Any) -> float:
        """Device time of one logged launch, once it has finished."""
        raise NotImplementedError

    def scratch(self, count: int, queue: Any = None) -> Any:
        """A temporary buffer of `count` float32 values from a memory pool, so repeated calls of
        one shape allocate nothing: it goes back to the pool when dropped, and work queued on
        the same `queue` after that may reuse it, which in-order queues make safe."""
        return self.alloc(count)

    def activate(self) -> ContextManager:
        """A context in which this backend's device is the one that allocations and launches
        go to, the previous one restored after. An OpenCL context names its device in every
        call, so nothing is needed there; CUDA has a current device per thread, which a caller
        with several GPUs may have set to another."""
        return nullcontext()

    def release(self) -> None:
        """Free what the backend holds (optional)."""
