"""A repeated call's launch on CUDA, queued through the driver's cuLaunchKernel with its
argument block laid out once: a call writes its buffers' addresses into the block and launches.

CuPy's `RawKernel.__call__` converts every argument on every launch (a dozen scalars and three
arrays for the direct kernel), which costs more host time than a small product's kernel runs;
the driver call takes the block as it is."""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import numpy as np

from clgemm.backends.base import Arg, Backend, PreparedLaunch
from clgemm.core.errors import LaunchError

try:  # CuPy is optional: a missing or broken installation means no CUDA devices
    import cupy
except Exception:  # pragma: no cover - depends on the machine
    cupy = None


def _held(a: Any) -> ctypes._SimpleCData | None:
    """An argument as the kernel takes it, in memory of its own: ints as 32-bit ints, floats
    as 32-bit floats, device arrays as their address; None for anything else."""
    if isinstance(a, (bool, int, np.integer)):
        return ctypes.c_int32(int(a))
    if isinstance(a, (float, np.floating)):
        return ctypes.c_float(float(a))
    pointer = getattr(getattr(a, "data", None), "ptr", None)
    return ctypes.c_uint64(pointer) if isinstance(pointer, int) else None


class DriverLaunch(PreparedLaunch):
    """A launch with its grid, block and argument block fixed; the buffers at `slots` are
    written into the block by each call."""

    def __init__(self, backend: Backend, kernel: Any, global_size: Sequence[int],
                 local_size: Sequence[int], args: Sequence[Arg], slots: Sequence[int],
                 grid: tuple[int, int, int], block: tuple[int, int, int]):
        super().__init__(backend, kernel, global_size, local_size, args, slots)
        found = [ctypes.c_uint64(0) if i in slots else _held(a) for i, a in enumerate(args)]
        held = [h for h in found if h is not None]
        if len(held) != len(found):
            raise TypeError("an argument the driver cannot be handed as it is")
        self._held = held  # the block points into these: they live as long as the launch
        self._block = (ctypes.c_void_p * len(held))(*[ctypes.addressof(h) for h in held])
        self._address = ctypes.addressof(self._block)
        self._slot_values = [held[i] for i in slots]
        self._function = kernel.kernel.ptr
        self._shape = (*grid, *block)
        # looked up once: a small product's launch is host-bound, each lookup a share of it
        self._current_stream = cupy.cuda.get_current_stream
        self._launch = cupy.cuda.driver.launchKernel

    def __call__(self, buffers: Sequence[Any], queue: Any,
                 wait_for: Sequence[Any] | None) -> Any:
        if self.backend._logged() is not None:  # measuring code times every launch
            return super().__call__(buffers, queue, wait_for)
        for value, buf in zip(self._slot_values, buffers):
            value.value = buf.data.ptr
        stream = self._current_stream()
        try:
            if wait_for:
                for event in wait_for:
                    stream.wait_event(event)
            self._launch(self._function, *self._shape, 0, stream.ptr, self._address, 0)
        except Exception as exc:  # CUDADriverError: resources, illegal address, ...
            raise LaunchError(f"launch failed: {exc}") from exc
        return None
