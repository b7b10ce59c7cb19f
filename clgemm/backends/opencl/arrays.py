"""pyopencl arrays and buffers as gemm's operands: read where they lie, on their own context."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from clgemm.backends.base import (Backend, DeviceArrays, Lookups, Named, Operand,
                                  off_the_vectors, strided_operand)
from clgemm.backends.opencl.backend import OpenCLBackend, host_pointer, opencl_backend
from clgemm.core.errors import UsageError
from clgemm.devices.info import DeviceInfo

try:
    import pyopencl as cl
    import pyopencl.array as cla
    import pyopencl.tools as cl_tools
    HAVE_PYOPENCL = True
except ImportError:  # pragma: no cover - pyopencl is a hard dependency, but stay importable
    HAVE_PYOPENCL = False

#: what needs the OpenCL backend, as messages name it
_MEMORY = "pyopencl memory"
#: templates of new arrays kept (`PyOpenCLArrays.empty`) before the table is emptied
TEMPLATES = 64


class PyOpenCLArrays(DeviceArrays):
    """pyopencl arrays and buffers. Arrays made in a caller's own OpenCL context can only be used
    by a backend in that context, so backends are kept per (context, device): the registry's
    shared backends (`adopt`) and those made for callers' contexts (`in_context`)."""

    backend = "opencl"
    label = "pyopencl"
    has_events = True
    array_type = "pyopencl.array.Array"

    def __init__(self, lookups: Lookups):
        self.lookups = lookups
        self._lock = threading.RLock()
        #: backends by (context, device) handle, the registry's shared ones included
        self._by_context: dict[tuple[int, int], OpenCLBackend] = {}
        #: empty arrays holding no memory, by (queue, pool, shape): what `empty` makes its
        #: arrays from
        self._templates: dict[tuple, Any] = {}
        #: whether every device of a context is a CPU, by the context's handle
        self._cpu_contexts: dict[int, bool] = {}

    def in_context(self, context: Any, device: Any) -> OpenCLBackend:
        """The backend of a pyopencl context and one of its devices (a caller's arrays')."""
        with self._lock:
            key = (context.int_ptr, device.int_ptr)
            if key not in self._by_context:
                info = next((d for d in self.lookups.devices() if d.handle == device), None)
                if info is None:
                    raise UsageError(f"the device '{device.name.strip()}' is not among the "
                                     f"devices clgemm lists (see 'clgemm devices')")
                self._by_context[key] = OpenCLBackend.in_context(context, info)
            return self._by_context[key]

    def adopt(self, backend: Backend) -> None:
        if isinstance(backend, OpenCLBackend):
            with self._lock:
                key = (backend.context.int_ptr, backend.device.handle.int_ptr)
                self._by_context[key] = backend

    def forget(self, backends: bool) -> None:
        if backends:
            with self._lock:
                self._by_context.clear()
                self._templates.clear()  # they hold the backends' queues and pools

    def signature(self, x: Any) -> tuple | None:
        if self._off_the_vectors(x):
            return None  # read through a copy (`readable`), which a repeated call cannot keep
        queue = x.queue
        return (type(x), x.shape, x.strides, x.dtype.char, x.offset, x.context.int_ptr,
                queue.int_ptr if queue is not None else 0)

    def basis(self, x: Any) -> tuple:
        # Each part of the signature is an attribute of x that only an assignment can change,
        # and an assignment puts another object there: the objects themselves are the basis.
        return (x.shape, x.strides, x.offset, x.dtype, x.context, x.queue)

    def same_basis(self, x: Any, basis: tuple) -> bool:
        shape, strides, offset, dtype, context, queue = basis
        return (x.shape is shape and x.strides is strides and x.offset is offset
                and x.dtype is dtype and x.context is context and x.queue is queue)

    def readable(self, x: Any) -> Any:
        # A buffer made over the caller's host array (USE_HOST_PTR) is read by a CPU's kernels
        # at that array's address, so an array read in place (at offset 0, contiguous) that
        # starts off the vectors is copied; a buffer goes through `readable_buffers`.
        if isinstance(x, cla.Array) and self._off_the_vectors(x):
            return x.copy()
        return x

    def _off_the_vectors(self, x: Any) -> bool:
        """Whether a contiguous array at offset 0 in a CPU context lies at a host address of
        the caller's that starts off the kernels' vectors."""
        context = x.context
        cpu = self._cpu_contexts.get(context.int_ptr)
        if cpu is None:
            cpu = all(d.type & cl.device_type.CPU for d in context.devices)
            self._cpu_contexts[context.int_ptr] = cpu
        if not cpu or x.offset or not (x.flags.c_contiguous or x.flags.f_contiguous):
            return False  # a GPU reads its own memory; an offset or strides: gemm() packs it
        buf = x.base_data
        if buf is None:
            return False
        address = host_pointer(buf)
        return address is not None and off_the_vectors(address, x.size)

    def is_array(self, x: Any) -> bool:
        return HAVE_PYOPENCL and isinstance(x, cla.Array)

    def in_place(self, name: str, x: Any) -> Operand:
        if x.offset % 4:
            raise UsageError(f"{name} starts at byte offset {x.offset}, not a whole number of "
                             f"floats")
        return strided_operand(name, x, x.base_data, x.offset // 4, "pyopencl")

    def buffer_of(self, x: Any) -> tuple[Any, int]:
        return x.base_data, x.offset // 4

    def kernel_arg(self, x: Any) -> Any:
        return x.base_data

    def allocation(self, x: Any) -> Any:
        # A sub-buffer shares its parent's memory: only a buffer of its own is an allocation.
        buf = x.base_data
        if buf is None or isinstance(buf, cl_tools.PooledBuffer):
            return None if buf is None else buf.int_ptr
        parent = buf.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT)
        return buf.int_ptr if parent is None else None

    def _context_of(self, named: Named) -> tuple[Any, Any]:
        """The one context (and device) the arrays share; a mismatch is refused."""
        first_name, first = named[0]
        for name, x in named[1:]:
            if x.context != first.context:
                raise UsageError(f"{first_name} and {name} live in different OpenCL contexts; "
                                 f"put them in one context (or pass NumPy arrays)")
        for _, x in named:
            if x.queue is not None:
                return first.context, x.queue.device
        devices = first.context.devices
        if len(devices) != 1:
            raise UsageError(f"{first_name} has no queue and its context has {len(devices)} "
                             f"devices: give the arrays a queue")
        return first.context, devices[0]

    def backend_for(self, named: Named, info: DeviceInfo | None,
                    backend: Backend | None) -> Backend:
        context, dev = self._context_of(named)
        if backend is not None:
            if opencl_backend(backend, _MEMORY).context != context:
                raise UsageError(f"{named[0][0]} lives in another OpenCL context than the "
                                 f"backend passed; use the arrays' context (or omit backend)")
            return backend
        if info is not None:
            if info.handle not in context.devices:
                raise UsageError(f"{named[0][0]} lives in an OpenCL context of device "
                                 f"'{dev.name.strip()}', not of the device asked for "
                                 f"('{info.name}')")
            dev = info.handle
        return self.in_context(context, dev)

    def queue_for(self, backend: Backend, named: Named) -> Any:
        queues: list[Any] = []
        for _, x in named:
            if x.queue is not None and not any(x.queue == q for q in queues):
                queues.append(x.queue)
        mine = [q for q in queues if q.device == backend.device.handle]
        chosen = mine[0] if mine else opencl_backend(backend, _MEMORY).queue
        for q in queues:
            if q != chosen:
                q.finish()
        return chosen

    def steady_queue(self, backend: Backend, named: Named) -> tuple[bool, Any]:
        # Arrays on several queues: the others are finished on every call (queue_for).
        queues = {x.queue.int_ptr for _, x in named if x.queue is not None}
        if len(queues) > 1:
            return False, None
        return True, self.queue_for(backend, named)

    def empty(self, backend: Backend, named: Named, shape: tuple[int, ...]) -> Any:
        # pyopencl's Array constructor checks its shape with NumPy and took most of a new C's
        # cost (tens of microseconds, a share of a small call that its launch does not have);
        # `empty_like` on an array of the same queue, pool and shape skips those checks. The
        # template holds the queue and the pool but no memory: its buffer is dropped.
        queue = self.queue_for(backend, named)
        pool = opencl_backend(backend, _MEMORY).pool(queue)
        key = (queue.int_ptr, id(pool), shape)
        template = self._templates.get(key)
        if template is None:
            template = cla.empty(queue, shape, np.float32, allocator=pool)
            template.base_data = None
            with self._lock:
                if len(self._templates) >= TEMPLATES:
                    self._templates.clear()
                self._templates[key] = template
        return cla.empty_like(template)

    def events(self, x: Any) -> list[Any]:
        return list(x.events)

    def add_event(self, x: Any, event: Any) -> None:
        if event is not None:
            x.add_event(event)

    def replace_events(self, x: Any, event: Any) -> None:
        # Not add_event: past a dozen events it waits on the host for the oldest four.
        if event is not None:
            x.events[:] = [event]

    def memory_range(self, buf: Any, offset: int, count: int) -> tuple[Any, int, int]:
        # A sub-buffer is a window of its parent's memory: measure from the parent.
        start = 4 * offset
        parent = buf.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT)
        if parent is not None:
            start += int(buf.get_info(cl.mem_info.OFFSET))
            buf = parent
        return buf.int_ptr, start, start + 4 * count

    def is_buffer(self, x: Any) -> bool:
        return HAVE_PYOPENCL and isinstance(x, cl.Buffer)

    def floats(self, x: Any) -> int:
        return x.size // 4

    def buffers_backend(self, named: Named, queue: Any, backend: Backend | None) -> Backend:
        if backend is None:
            if queue is not None:
                ocl = self.in_context(queue.context, queue.device)
            else:
                devices = named[0][1].context.devices
                if len(devices) != 1:
                    raise UsageError(f"the buffers' context has {len(devices)} devices: pass the "
                                     f"queue to run on")
                ocl = self.in_context(named[0][1].context, devices[0])
        else:
            ocl = opencl_backend(backend, _MEMORY)
            if queue is not None and queue.context != ocl.context:
                raise UsageError("queue and backend belong to different OpenCL contexts")
        for name, buf in named:
            if buf.context != ocl.context:
                raise UsageError(f"buffer {name} belongs to another OpenCL context than the "
                                 f"{'queue' if queue is not None else 'backend'} it was given "
                                 f"with")
        return ocl

    def buffers_queue(self, backend: Backend, queue: Any) -> Any:
        return queue if queue is not None else opencl_backend(backend, _MEMORY).queue

    def upload(self, backend: Backend, host: np.ndarray) -> Any:
        # on a queue as a user's is made (`OpenCLBackend.plain_queue`)
        return cla.to_device(opencl_backend(backend, _MEMORY).plain_queue, host)

    def download(self, x: Any) -> np.ndarray:
        return x.get()
