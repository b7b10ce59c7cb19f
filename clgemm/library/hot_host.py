"""A call on NumPy arrays, on a device that works in host memory (a CPU), whose signature was
seen before: its checks, kernel, plan and launches are known, so what is left is to wrap the
arrays in buffers, queue the launches and wait for C.

On a CPU the host's time is part of every call, and the host's work right after a long kernel
runs several times slower than the same work repeated in a loop of small calls. So the repeated
call does little: the key is built from the arrays' shapes and strides and the arguments as
given, and only calls the full path ran in place (contiguous operands read where they lie, C
written where it lies, no operand sharing memory with C) are remembered here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from clgemm.backends import Backend
from clgemm.core import settings
from clgemm.core.errors import LaunchError
from clgemm.devices.info import DeviceInfo
from clgemm.library.arguments import plain_scalars_and_flags
from clgemm.library.order import LaunchOrder
from clgemm.library.program import CallProgram


def _device_key(device: Any) -> Any:
    """`device` as a key part: as given where it is a name or an index; a DeviceInfo by what
    names it; None by the $CLGEMM_DEVICE it stands for now. Anything else: no key (NotImplemented)."""
    if device is None:
        return ("env", settings.device())
    if type(device) in (int, str):
        return device
    if isinstance(device, DeviceInfo):
        return ("info", device.backend, device.index, device.key)
    return NotImplemented


def _array_key(x: Any) -> tuple | None:
    """A contiguous float32 matrix's shape, strides and whether it may be written; None for
    anything else, which the full path handles each time."""
    if type(x) is not np.ndarray or x.ndim != 2 or x.dtype != np.float32:
        return None
    flags = x.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        return None
    return (x.shape, x.strides, flags.writeable)


def host_key(a: Any, b: Any, c: Any, alpha: Any, beta: Any, trans_a: Any, trans_b: Any,
             device: Any, backend: Any) -> tuple | None:
    """The key of a call on NumPy matrices whose every argument is of a kind whose equality
    means the same checks, device and program; None where any is not."""
    if not plain_scalars_and_flags(alpha, beta, trans_a, trans_b):
        return None
    dev = _device_key(device)
    if dev is NotImplemented:
        return None
    if backend is not None and type(backend) is not str and not isinstance(backend, Backend):
        return None
    ka, kb = _array_key(a), _array_key(b)
    kc = None if c is None else _array_key(c)
    if ka is None or kb is None or (c is not None and kc is None):
        return None
    be = backend if type(backend) is str or backend is None else id(backend)
    return ("host", ka, kb, kc, alpha, beta, trans_a, trans_b, dev, be)


@dataclass(frozen=True)
class HostCall:
    be: Backend
    program: CallProgram
    #: the program reads B where the caller's A is and A where B is (C is C-ordered)
    swap: bool
    #: the layout each of A, B and C is read in as one run of floats
    layouts: tuple[str, str, str]
    #: C's shape, for a call that makes a new one
    shape: tuple[int, int]
    #: the bytes A and B must start on to be read where they lie (`plan.in_place_alignment`)
    align: tuple[int, int]

    def __call__(self, a: np.ndarray, b: np.ndarray, c: np.ndarray | None,
                 wait_for: Any) -> np.ndarray | None:
        """The call's result, or None where it must go the whole way: where it waits for
        events, where C shares memory with A or B this time, where A or B does not start where
        the kernel can read it in place (the full path copies it), or where a launch failed
        (the full path drops the configuration)."""
        if wait_for is not None:
            return None
        if self.align != (4, 4) and (a.ctypes.data % self.align[0]
                                     or b.ctypes.data % self.align[1]):
            return None  # (reading an address costs microseconds: only where it matters)
        if c is None:
            c = np.empty(self.shape, dtype=np.float32)
        elif np.may_share_memory(c, a) or np.may_share_memory(c, b):
            return None
        be, (la, lb, lc) = self.be, self.layouts
        flat_c = c.reshape(-1, order=lc)  # type: ignore[call-overload]
        ba = be.host_buffer(a.reshape(-1, order=la), writable=False)  # type: ignore[call-overload]
        bb = be.host_buffer(b.reshape(-1, order=lb), writable=False)  # type: ignore[call-overload]
        bc = be.host_buffer(flat_c, writable=True)
        try:
            with be.activate(), be.lock:
                self.program.run(LaunchOrder(be, getattr(be, "queue", None), []),
                                 *((bb, ba) if self.swap else (ba, bb)), bc)
        except LaunchError:  # C is written by the last launch only: the full path starts over
            return None
        be.sync_host(bc, flat_c)
        return c
