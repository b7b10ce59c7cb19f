"""OpenCL through pyopencl: one context and one profiling queue per device."""

from __future__ import annotations

import ctypes.util
import functools
import hashlib
import os
import re
from typing import Any, Mapping, Sequence

import numpy as np

from clgemm.backends.base import Arg, Backend, PreparedLaunch, define_options
from clgemm.backends.opencl.prepared import StandingArgs, arg_key, scalar_arg
from clgemm.core.errors import ArgumentTypeError, BuildError, LaunchError, UsageError
from clgemm.core.settings import library_path
from clgemm.devices.info import DeviceInfo

try:
    import pyopencl as cl
    import pyopencl.tools as cl_tools
    HAVE_PYOPENCL = True
except ImportError:  # pragma: no cover - pyopencl is a hard dependency, but stay importable
    HAVE_PYOPENCL = False

#: the platform name of PoCL, whose CPU devices work in the host's memory (`sync_host`)
POCL_PLATFORM = "Portable Computing Language"


def host_pointer(buf: Any) -> int | None:
    """The host address of the array a buffer was made over (USE_HOST_PTR); None for any other
    buffer."""
    if not isinstance(buf, cl.MemoryObject):
        return None
    flags: Any = buf.get_info(cl.mem_info.FLAGS)
    if not flags & cl.mem_flags.USE_HOST_PTR:
        return None
    return int(buf.get_host_array((1,), np.dtype(np.uint8)).ctypes.data)


_TYPES = {"CPU": 1 << 1, "GPU": 1 << 2, "ACCELERATOR": 1 << 3, "CUSTOM": 1 << 4}


def _type_name(value: int) -> str:
    for name, bit in _TYPES.items():
        if value & bit:
            return name
    return "OTHER"


def _sub_group_sizes(dev) -> tuple[int, ...]:
    try:
        sizes = dev.get_info(0x4108)  # CL_DEVICE_SUB_GROUP_SIZES_INTEL
        return tuple(int(s) for s in sizes)
    except Exception:
        return ()


def _compute_capability(dev) -> str:
    """NVIDIA's OpenCL reports it through cl_nv_device_attribute_query; others have none."""
    try:
        if "cl_nv_device_attribute_query" not in dev.extensions:
            return ""
        return f"{dev.get_info(0x4000)}.{dev.get_info(0x4001)}"  # ..._MAJOR_NV, ..._MINOR_NV
    except Exception:
        return ""


def discover() -> list[DeviceInfo]:
    if not HAVE_PYOPENCL:
        return []
    try:
        platforms = cl.get_platforms()
    except Exception:  # no ICD installed: no platform at all
        return []
    found = []
    for plat in sorted(platforms, key=lambda p: p.name):
        try:
            devs = plat.get_devices()
        except Exception:
            continue
        for dev in devs:
            found.append(DeviceInfo(
                index=-1, backend="opencl", platform=plat.name.strip(), name=dev.name.strip(),
                type=_type_name(dev.type), vendor=dev.vendor.strip(),
                compute_units=dev.max_compute_units, clock_mhz=dev.max_clock_frequency,
                global_mem_bytes=dev.global_mem_size, local_mem_bytes=dev.local_mem_size,
                max_work_group_size=dev.max_work_group_size,
                max_work_item_sizes=tuple(dev.max_work_item_sizes),
                max_alloc_bytes=dev.max_mem_alloc_size,
                driver_version=dev.driver_version.strip(), version=dev.version.strip(),
                extensions=tuple(dev.extensions.split()),
                sub_group_sizes=_sub_group_sizes(dev),
                compute_capability=_compute_capability(dev), handle=dev))
    return found


class OpenCLBackend(Backend):
    name = "opencl"

    def __init__(self, device: DeviceInfo):
        self.device = device
        self.context = cl.Context([device.handle])
        self.queue = cl.CommandQueue(self.context,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._kernels: dict[str, Any] = {}
        self._pools: dict[int, Any] = {}
        #: per queue handle: (queue, whether it runs in order)
        self._in_order: dict[int, tuple[Any, bool]] = {}
        #: per kernel, what its arguments were set to last and the buffers kept alive until
        #: its next launch (see `_set_args`)
        self._last_args: dict[int, tuple[list[Any], list[Any]]] = {}
        #: whether the kernels store into a USE_HOST_PTR buffer's host array itself, so that
        #: `sync_host` only waits, where a map would queue one more command: PoCL's CPU drivers
        #: keep no memory of their own behind such a buffer (its common driver's allocation),
        #: which `_stores_reach_host` checks once (None until then)
        self._kernels_write_host: bool | None = (
            None if device.is_cpu and device.platform.startswith(POCL_PLATFORM) else False)

    @classmethod
    def in_context(cls, context: Any, device: DeviceInfo) -> "OpenCLBackend":
        """A backend inside a caller's context (a pyopencl array's, say), so the caller's
        buffers can be used as they are. It gets its own profiling queue on the device, because
        `launch` times by events and the caller's queue need not profile; the caller finishes
        its own queue before handing buffers over."""
        self = cls.__new__(cls)
        self.device = device
        self.context = context
        self.queue = cl.CommandQueue(context, device.handle,
                                     properties=cl.command_queue_properties.PROFILING_ENABLE)
        self._kernels = {}
        self._pools = {}
        self._in_order = {}
        self._last_args = {}
        return self

    def header(self) -> str:
        return ""

    @functools.cached_property
    def plain_queue(self) -> Any:
        """A queue of the backend's context made as a user makes one, which does not profile:
        where measuring code puts the device arrays it calls gemm() on, so that the call's
        launches cost what a user's cost (NVIDIA's OpenCL makes a launch's event dearer on a
        profiling queue: results/h100/call/held-timing). The backend's own queue profiles, because
        `launch` and the launch log time by events; measuring code keeps its own buffers and
        launches on that one queue, so that nothing it runs has to be ordered across queues."""
        return cl.CommandQueue(self.context, self.device.handle)

    def build(self, source: str, defines: Mapping[str, int], kernel: str) -> Any:
        options = define_options(defines)
        key = hashlib.sha1("\0".join([source, kernel, *options]).encode()).hexdigest()
        if key in self._kernels:
            return self._kernels[key]
        program = cl.Program(self.context, source)
        try:
            program = program.build(options=options)
            knl = getattr(program, kernel)
        except cl.RuntimeError as exc:  # build failures, missing kernel
            log = self._build_log(program) or str(exc)
            raise BuildError(f"build failed: {first_error(log)}", log) from exc
        except (AttributeError, cl.LogicError) as exc:
            raise BuildError(f"build failed: {exc}", str(exc)) from exc
        self._kernels[key] = knl
        return knl

    def _build_log(self, program: Any) -> str:
        """The compiler's output for this device; pyopencl's exception text only repeats the
        status code, and its log, where it has one, comes after the device's description."""
        try:
            return str(program.get_build_info(self.device.handle,
                                              cl.program_build_info.LOG)).strip()
        except Exception:  # no log to be had: the caller falls back to the exception's text
            return ""

    def to_device(self, host: np.ndarray) -> Any:
        host = np.ascontiguousarray(host, dtype=np.float32)
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        return cl.Buffer(self.context, flags, hostbuf=host)

    def host_buffer(self, host: np.ndarray, writable: bool, align: int = 4) -> Any | None:
        # A CPU device's buffers are host memory: with USE_HOST_PTR the kernels work in the
        # array itself, which saves a copy each way of every operand the size of the product.
        if not self.device.is_cpu or not host.flags.c_contiguous or host.dtype != np.float32:
            return None
        if align > 4 and host.ctypes.data % align:  # PoCL hands the kernel the address as is
            return None
        access = cl.mem_flags.READ_WRITE if writable else cl.mem_flags.READ_ONLY
        return cl.Buffer(self.context, access | cl.mem_flags.USE_HOST_PTR, hostbuf=host)

    def host_address(self, buf: Any) -> int | None:
        return host_pointer(buf) if self.device.is_cpu else None

    def copy_buffer(self, dst: Any, src: Any, nbytes: int, queue: Any,
                    wait_for: list[Any] | None) -> Any:
        try:
            return cl.enqueue_copy(queue or self.queue, dst, src, byte_count=nbytes,
                                   wait_for=wait_for)
        except cl.Error as exc:
            raise LaunchError(f"copy failed: {exc}") from exc

    def sync_host(self, buf: Any, host: np.ndarray) -> None:
        if self._kernels_write_host is None:
            self._kernels_write_host = self._stores_reach_host()
        if self._kernels_write_host:
            self.queue.finish()
            return
        mapped, _ = cl.enqueue_map_buffer(self.queue, buf, cl.map_flags.READ, 0, host.shape,
                                          host.dtype, is_blocking=True)
        try:
            if mapped.ctypes.data != host.ctypes.data:  # the driver kept a copy of its own
                host[...] = mapped
        finally:
            mapped.base.release(self.queue)

    def _stores_reach_host(self) -> bool:
        """Whether the device's stores into a buffer made over a host array reach that array
        with no map: a fill of one that starts off every vector, seen by the host once the
        queue is done. A driver of PoCL's that keeps its own copy (a remote device) fails it."""
        raw = np.zeros(20, np.float32)
        host = raw[1:17]
        buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR,
                        hostbuf=host)
        cl.enqueue_fill_buffer(self.queue, buf, np.ones(1, np.float32), 0, host.nbytes)
        self.queue.finish()
        seen = bool((host == 1.0).all())
        buf.release()
        return seen

    def alloc(self, count: int) -> Any:
        return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size=max(4, 4 * count))

    def fill(self, buf: Any, value: float, count: int) -> None:
        pattern = np.full(1, value, dtype=np.float32)
        cl.enqueue_fill_buffer(self.queue, buf, pattern, 0, 4 * count).wait()

    def to_host(self, buf: Any, count: int) -> np.ndarray:
        out = np.empty(count, dtype=np.float32)
        cl.enqueue_copy(self.queue, out, buf).wait()
        return out

    def launch(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
               args: Sequence[Any]) -> float:
        cargs = [scalar_arg(a) for a in args]
        self._last_args.pop(kernel.int_ptr, None)  # set anew here, so not what enqueue last set
        try:
            kernel.set_args(*cargs)
            event = cl.enqueue_nd_range_kernel(self.queue, kernel, tuple(global_size),
                                               tuple(local_size))
            event.wait()
            return (event.profile.end - event.profile.start) * 1e-6
        except cl.Error as exc:
            raise LaunchError(f"launch failed: {exc}") from exc

    def enqueue(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Any], queue: Any = None,
                wait_for: Sequence[Any] | None = None) -> Any:
        log = self._logged()
        try:
            self._set_args(kernel, args)
            if log is None or queue is None or queue == self.queue:
                event = cl.enqueue_nd_range_kernel(queue or self.queue, kernel,
                                                   tuple(global_size), tuple(local_size),
                                                   wait_for=wait_for or None)
            else:
                # Measuring code wants the launch's own time, which a queue that does not
                # profile cannot give: the launch runs on the backend's queue after what its
                # own holds, and is waited for, so that what comes after it there follows it.
                queue.finish()
                event = cl.enqueue_nd_range_kernel(self.queue, kernel, tuple(global_size),
                                                   tuple(local_size), wait_for=wait_for or None)
                event.wait()
        except cl.Error as exc:
            self._last_args.pop(kernel.int_ptr, None)
            raise LaunchError(f"launch failed: {exc}") from exc
        if log is not None:
            log.add(kernel, event)
        return event

    def prepare(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Arg], slots: Sequence[int]) -> PreparedLaunch:
        return StandingArgs(self, kernel, global_size, local_size, args, slots)

    def wait_list(self, wait_for: Any) -> list[Any]:
        if wait_for is None:
            return []
        if not isinstance(wait_for, (list, tuple)):
            raise ArgumentTypeError(f"wait_for must be a list of pyopencl events, got "
                                    f"{type(wait_for).__name__}")
        for i, event in enumerate(wait_for):
            if not isinstance(event, cl.Event):
                raise ArgumentTypeError(f"wait_for[{i}] must be a pyopencl event, got "
                                        f"{type(event).__name__}")
            if event.get_info(cl.event_info.CONTEXT) != self.context:
                raise UsageError(f"wait_for[{i}] is an event of another OpenCL context than "
                                 f"the one the call runs in")
        return list(wait_for)

    def in_order(self, queue: Any) -> bool:
        # Asked once per queue: a queue's properties cannot change, and asking costs a call
        # into the driver on every gemm().
        queue = queue or self.queue
        found = self._in_order.get(queue.int_ptr)
        if found is None or found[0] is not queue:
            ooo = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
            found = self._in_order[queue.int_ptr] = (queue, not (queue.properties & ooo))
        return found[1]

    def marker(self, queue: Any) -> Any:
        if self.in_order(queue):
            return None
        try:
            return cl.enqueue_marker(queue or self.queue)
        except cl.Error as exc:
            raise LaunchError(f"marker failed: {exc}") from exc

    def _set_args(self, kernel: Any, args: Sequence[Any]) -> None:
        """Set only the arguments that differ from the kernel's last launch. NVIDIA's OpenCL
        takes tens of microseconds per clSetKernelArg, more than a small product's kernel, and
        repeated calls of one shape pass the same buffers (the pools hand them back) and sizes;
        OpenCL keeps a kernel's arguments between launches, so the unchanged ones stand. A
        buffer is known by its handle, which is only safe while the handle cannot be reused for
        another buffer: pooled buffers' memory stays with the pool, and any other buffer is
        kept alive here until the kernel's next launch. Ints go as 32-bit ints, floats as
        32-bit floats."""
        keys = [arg_key(a) for a in args]
        last = self._last_args.get(kernel.int_ptr)
        if last is None or len(last[0]) != len(keys):
            kernel.set_args(*[scalar_arg(a) for a in args])
        else:
            for i, (new, old) in enumerate(zip(keys, last[0])):
                if new != old:
                    kernel.set_arg(i, scalar_arg(args[i]))
        held = [a for a in args if hasattr(a, "int_ptr")
                and not isinstance(a, cl_tools.PooledBuffer)]
        self._last_args[kernel.int_ptr] = (keys, held)

    def elapsed_ms(self, record: Any) -> float:
        record.wait()
        return (record.profile.end - record.profile.start) * 1e-6

    def pool(self, queue: Any = None) -> Any:
        """pyopencl's memory pool for work on `queue`: one pool per queue, because a buffer
        returned to a pool may be handed out again while earlier work on it still runs, which
        only the order of one queue makes safe: an in-order queue's by itself, an out-of-order
        queue's through a `marker` that the writes of the new owner wait for."""
        queue = queue or self.queue
        found = self._pools.get(queue.int_ptr)
        if found is None or found[0] is not queue:
            found = self._pools[queue.int_ptr] = (
                queue, cl_tools.MemoryPool(cl_tools.ImmediateAllocator(queue)))
        return found[1]

    def scratch(self, count: int, queue: Any = None) -> Any:
        return self.pool(queue).allocate(max(4, 4 * count))

    def synchronize(self) -> None:
        self.queue.finish()

    def release(self) -> None:
        self._kernels.clear()
        self._pools.clear()
        self._in_order.clear()
        self.queue.finish()


def bus_id(device: DeviceInfo) -> str | None:
    """Where the device sits on the PCI bus, where the driver says it: NVIDIA's attribute query
    gives the bus and the slot (the PCI device number, "00:06"); None elsewhere (a CPU)."""
    try:
        bus = device.handle.pci_bus_id_nv
        slot = device.handle.pci_slot_id_nv
    except Exception:  # no such query on this driver: it raises rather than answering
        return None
    return f"{int(bus):02x}:{int(slot):02x}"


def first_error(log: str) -> str:
    """The line of a build log that says what is wrong, for a one-line message: the first that
    names an error, else the first line. The program is built from a string, so a file the log
    names (PoCL's temporary copy, say) is that source: it is called "source" here."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    line = next((ln for ln in lines if re.search(r"\berror\b", ln, re.IGNORECASE)),
                lines[0] if lines else "no build log")
    return re.sub(r"[^\s:\"']*\.cl(?=:\d)", "source", line)


def open_backend(device: DeviceInfo) -> OpenCLBackend:
    return OpenCLBackend(device)


def opencl_backend(backend: Backend, what: str) -> OpenCLBackend:
    """The backend as the OpenCL backend whose context, queue and pools `what` needs."""
    if not isinstance(backend, OpenCLBackend):
        raise UsageError(f"{what} needs the OpenCL backend, not the {backend.name} backend")
    return backend


def versions() -> dict[str, str]:
    """The library versions that can change an OpenCL result, for provenance."""
    return {"pyopencl": cl.VERSION_TEXT} if HAVE_PYOPENCL else {}


# -- NVIDIA's OpenCL without an ICD registration -------------------------------------------------
NVIDIA_OPENCL_LIB = "libnvidia-opencl.so.1"
_NVIDIA_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                    "/usr/lib", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib",
                    "/usr/local/cuda/compat")


def find_nvidia_opencl() -> str | None:
    """Where NVIDIA's OpenCL driver library is, if anywhere: LD_LIBRARY_PATH, the usual library
    folders (container runtimes mount the driver into some of them without running ldconfig),
    then the linker cache."""
    for d in [*library_path(), *_NVIDIA_LIB_DIRS]:
        path = os.path.join(d, NVIDIA_OPENCL_LIB)
        if os.path.exists(path):
            return path
    return ctypes.util.find_library("nvidia-opencl")


def nvidia_icd_note() -> str | None:
    """A note for 'clgemm devices' when NVIDIA's OpenCL library is installed but the ICD loader
    does not know it, so no NVIDIA platform appears: a common state of containers, where the
    driver is mounted in but /etc/OpenCL/vendors/nvidia.icd is not. None when all is well."""
    library = find_nvidia_opencl()
    if library is None:
        return None
    names: list[str] = []
    if HAVE_PYOPENCL:
        try:
            names = [p.name for p in cl.get_platforms()]
        except Exception:  # no platform at all: the loader found no ICD
            names = []
    if any("nvidia" in n.lower() for n in names):
        return None
    return (f"note: NVIDIA's OpenCL library is installed ({library}) but no NVIDIA OpenCL "
            f"platform is listed: it is not registered with the OpenCL ICD loader. Register it "
            f"(as root):\n"
            f"  echo {NVIDIA_OPENCL_LIB} > /etc/OpenCL/vendors/nvidia.icd\n"
            f"or, without root, make a folder of .icd files and point OCL_ICD_VENDORS at it:\n"
            f"  mkdir -p ~/icd && cp /etc/OpenCL/vendors/*.icd ~/icd/ 2>/dev/null; "
            f"echo {NVIDIA_OPENCL_LIB} > ~/icd/nvidia.icd\n"
            f"  export OCL_ICD_VENDORS=~/icd")
