"""CUDA through CuPy: the same OpenCL kernel files, compiled by NVRTC with
clgemm/kernels/cl2cuda.h.

Running the unchanged .cl sources on CUDA separates what the kernels do from what each vendor's
compiler and runtime make of them: on an NVIDIA GPU the ladder can be compared between NVIDIA's
OpenCL and CUDA stacks, and with cuBLAS. CuPy is optional; without it (or without a CUDA device)
this backend finds no devices and the rest of clgemm is unaffected.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from typing import Any, Callable, ContextManager, Iterator, Mapping, Sequence

import numpy as np

from clgemm.backends.base import Arg, Backend, PreparedLaunch, define_options
from clgemm.backends.cuda.prepared import DriverLaunch
from clgemm.core.errors import ArgumentTypeError, BuildError, LaunchError
from clgemm.core.paths import KERNELS
from clgemm.devices.info import DeviceInfo

try:  # CuPy is optional: a missing or broken installation means no CUDA devices
    import cupy
except Exception:  # pragma: no cover - depends on the machine
    cupy = None

HEADER = "cl2cuda.h"

#: OpenCL features that clgemm/kernels/cl2cuda.h provides on every CUDA device, reported as the
#: device's "extensions" so that rung constraints written against OpenCL extensions see them (the
#: warp serves as the sub-group: rung 8's shuffle path).
CUDA_PROVIDES = ("cl_khr_subgroups", "cl_khr_subgroup_shuffle")

#: CUDA's limits on the grid, in blocks per dimension (the same on every device since sm_30)
MAX_GRID = (2**31 - 1, 65535, 65535)

_CAST_CALL = re.compile(r"\(\s*([A-Za-z_]\w*)\s*\)\s*\(")
_KEYWORDS_BEFORE_EXPR = {"return", "else", "case", "do"}
_MACRO_HEAD = re.compile(r"\s*#\s*define\s+\w+(\([^)]*\))?$")


def _closing_paren(text: str, start: int) -> int:
    """Index of the ')' matching the '(' at `start`, or -1."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _has_top_level_comma(args: str) -> bool:
    depth = 0
    for c in args:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            return True
    return False


def translate(source: str) -> str:
    """Rewrite OpenCL's vector literal `(T)(a, b, ...)` as the C++ constructor call `T(a, b, ...)`.

    C++ reads `(float4)(a, b, c, d)` as a cast of the comma expression, i.e. of `d` alone, which
    would compile and silently give a wrong vector, and no header can change that. Only
    parenthesised single names followed by an argument list with a top-level comma are rewritten
    (the broadcast `(float4)(x)` is a valid C++ cast already), and only where the name cannot be a
    call's or a subscript's operand. For a function name the rewrite means the same call.
    """
    out, pos, at = [], 0, 0
    while (match := _CAST_CALL.search(source, at)) is not None:
        start = match.start()
        at = start + 1
        if start < pos or (start and (source[start - 1].isalnum() or source[start - 1] == "_")):
            continue  # inside a rewritten literal, or a call's (or macro's) argument list
        before = source[:start].rstrip()
        line = before[before.rfind("\n") + 1:]
        prev_word = re.search(r"(\w+)$", before)
        operand = before.endswith((")", "]")) or (prev_word and prev_word.group(1)
                                                   not in _KEYWORDS_BEFORE_EXPR)
        if operand and not _MACRO_HEAD.match(line):  # a macro's body may start with a literal
            continue
        open_at = match.end() - 1
        close_at = _closing_paren(source, open_at)
        if close_at < 0 or not _has_top_level_comma(source[open_at + 1:close_at]):
            continue
        out.append(source[pos:start])
        out.append(match.group(1))
        pos = open_at
    out.append(source[pos:])
    return "".join(out)


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def _property(rt: Any, props: dict, key: str, attribute: int, ordinal: int) -> int:
    """A device property from CuPy's properties dict, else from the device attribute."""
    if props.get(key):
        return int(props[key])
    try:
        return int(rt.deviceGetAttribute(attribute, ordinal))
    except Exception:
        return 0


def discover() -> list[DeviceInfo]:
    """CUDA devices in ordinal order; [] when CuPy, the driver or a device is missing."""
    if cupy is None:
        return []
    rt = cupy.cuda.runtime
    try:
        count = rt.getDeviceCount()
        driver, runtime = rt.driverGetVersion(), rt.runtimeGetVersion()
    except Exception:  # no driver, no device, or a CuPy built for another CUDA
        return []
    found = []
    for i in range(count):
        try:
            p = rt.getDeviceProperties(i)
        except Exception:
            continue
        name = p.get("name", b"CUDA device")
        name = name.decode() if isinstance(name, bytes) else str(name)
        # CUDA 13 dropped clockRate from the properties (CuPy builds differ in what they copy);
        # the device attributes keep them.
        clock_khz = _property(rt, p, "clockRate", 13, i)  # cudaDevAttrClockRate
        major = _property(rt, p, "major", 75, i)  # cudaDevAttrComputeCapabilityMajor
        minor = _property(rt, p, "minor", 76, i)
        warp = int(p.get("warpSize", 32))
        found.append(DeviceInfo(
            index=-1, backend="cuda", platform="CUDA", name=name.strip(), type="GPU",
            vendor="NVIDIA", compute_units=int(p["multiProcessorCount"]),
            clock_mhz=int(clock_khz) // 1000, global_mem_bytes=int(p["totalGlobalMem"]),
            # Static __shared__ arrays (all the kernels use) are limited to 48 KiB per block.
            local_mem_bytes=min(int(p["sharedMemPerBlock"]), 48 * 1024),
            max_work_group_size=int(p["maxThreadsPerBlock"]),
            max_work_item_sizes=tuple(int(x) for x in p["maxThreadsDim"]),
            max_alloc_bytes=int(p["totalGlobalMem"]),
            driver_version=f"{_version(driver)} (runtime {_version(runtime)})",
            version=f"CUDA compute capability {major}.{minor}",
            extensions=CUDA_PROVIDES, sub_group_sizes=(warp,),
            compute_capability=f"{major}.{minor}" if major else "", handle=i))
    return found


def bus_id(device: DeviceInfo) -> str | None:
    """Where the GPU sits on the PCI bus, as CUDA says it ("0000:00:06.0"): what tells two GPUs
    of one model apart in a cluster tune's records; None where CUDA does not answer."""
    if cupy is None:
        return None
    try:
        return str(cupy.cuda.runtime.deviceGetPCIBusId(int(device.handle)))
    except Exception:
        return None


def device_scope(ordinal: int) -> ContextManager:
    """A context in which CUDA device `ordinal` is current, the caller's restored on leaving."""
    return cupy.cuda.Device(ordinal)


def _same(a: Any) -> Any:
    return a


#: how a launch passes each kind of scalar: ints as 32-bit ints, floats as floats; anything else
#: (arrays, NumPy scalars already of the kernel's type) as it is. A dictionary by type, since a
#: small product's call makes a dozen of these per launch.
_ARG: dict[type, Callable[[Any], Any]] = {int: np.int32, float: np.float32, bool: np.int32,
                                          np.int64: np.int32, np.float64: np.float32}


#: a kernel that keeps the device busy for a number of its clock cycles: queued ahead of a timed
#: launch, so that the launch is waiting on the stream when its start event fires
_HOLD_SOURCE = r'''extern "C" __global__ void clgemm_hold(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}'''
#: cycles the hold lasts: about 50 us at 2 GHz, longer than a launch takes to reach the stream
#: from Python
HOLD_CYCLES = 100_000


def _dim3(sizes: Sequence[int]) -> tuple[int, int, int]:
    x, y, z = (tuple(sizes) + (1, 1, 1))[:3]
    return x, y, z


class CUDABackend(Backend):
    name = "cuda"
    max_groups = MAX_GRID

    def __init__(self, device: DeviceInfo):
        if cupy is None:  # pragma: no cover - discover() found nothing then
            raise LaunchError("CuPy is not installed")
        self.device = device
        self._cuda_device = cupy.cuda.Device(device.handle)
        self._cuda_device.use()
        self._kernels: dict[str, Any] = {}
        self._modules: list[Any] = []
        self._header = (KERNELS / HEADER).read_text()
        self._hold_kernel: Any = None
        #: the threads in which the device's context is known to be current: in any other
        #: the runtime may name the device (device 0 by default) while no context is current
        #: for the driver's launches (CUDA_ERROR_INVALID_CONTEXT in a new thread)
        self._threads = threading.local()
        self._threads.current = True  # use() above made the context current in this thread

    def _hold(self) -> None:
        """Keep the device busy while a timed launch is queued. Events around a launch on an
        idle device also time the host's way to the stream, from Python longer than a small
        product's kernel takes, so a tune at small shapes compared noise; behind the hold, the
        start event fires only once the launch is waiting (results/h100/call/held-timing)."""
        if self._hold_kernel is None:
            self._hold_kernel = cupy.RawKernel(_HOLD_SOURCE, "clgemm_hold")
        self._hold_kernel((1,), (1,), (np.int64(HOLD_CYCLES),))

    def header(self) -> str:
        return self._header

    def build(self, source: str, defines: Mapping[str, int], kernel: str) -> Any:
        options = tuple(define_options(defines))
        key = hashlib.sha1("\0".join([source, kernel, *options]).encode()).hexdigest()
        if key in self._kernels:
            return self._kernels[key]
        try:
            module = cupy.RawModule(code=translate(source), options=options)
            knl = module.get_function(kernel)  # NVRTC runs here, on first use
        except cupy.cuda.compiler.CompileException as exc:
            log = str(exc)
            first = next((ln for ln in log.splitlines() if "error" in ln), log.splitlines()[0]
                         if log else "")
            raise BuildError(f"build failed: {first.strip()}", log) from exc
        except Exception as exc:  # missing kernel name, driver refusing the module, ...
            raise BuildError(f"build failed: {exc}", str(exc)) from exc
        self._modules.append(module)
        self._kernels[key] = knl
        return knl

    def to_device(self, host: np.ndarray) -> Any:
        return cupy.asarray(np.ascontiguousarray(host, dtype=np.float32).ravel())

    def alloc(self, count: int) -> Any:
        return cupy.empty(max(1, count), dtype=cupy.float32)

    def fill(self, buf: Any, value: float, count: int) -> None:
        buf[:count].fill(np.float32(value))
        cupy.cuda.get_current_stream().synchronize()

    def to_host(self, buf: Any, count: int) -> np.ndarray:
        return cupy.asnumpy(buf[:count])

    def launch(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
               args: Sequence[Any]) -> float:
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        try:
            self._hold()
            start.record()
            self.enqueue(kernel, global_size, local_size, args)
            end.record()
            end.synchronize()
        except LaunchError:
            raise
        except Exception as exc:  # CUDADriverError: resources, illegal address, ...
            raise LaunchError(f"launch failed: {exc}") from exc
        return float(cupy.cuda.get_elapsed_time(start, end))

    def enqueue(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Any], queue: Any = None,
                wait_for: Sequence[Any] | None = None) -> Any:
        """On the current stream, as CuPy's own operations; `queue` is not used. The stream
        waits for the CUDA events of `wait_for` first (work recorded on other streams). A stream
        runs its work in order, so there is no launch event to hand back: None."""
        if any(g % l for g, l in zip(global_size, local_size)):
            raise LaunchError(f"launch failed: global size {tuple(global_size)} is not a "
                              f"multiple of the work-group size {tuple(local_size)}")
        grid = tuple(g // l for g, l in zip(global_size, local_size))
        grid, block = _dim3(grid), _dim3(local_size)
        cargs = tuple(_ARG.get(type(a), _same)(a) for a in args)
        log = self._logged()
        try:
            if wait_for:
                stream = cupy.cuda.get_current_stream()
                for event in wait_for:
                    stream.wait_event(event)
            if log is None:
                kernel(grid, block, cargs)
            else:
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                self._hold()
                start.record()
                kernel(grid, block, cargs)
                end.record()
                log.add(kernel, (start, end))
        except Exception as exc:  # CUDADriverError: resources, illegal address, ...
            raise LaunchError(f"launch failed: {exc}") from exc

    def prepare(self, kernel: Any, global_size: Sequence[int], local_size: Sequence[int],
                args: Sequence[Arg], slots: Sequence[int]) -> PreparedLaunch:
        """Through the driver where the launch can be laid out for it; else (a size that is
        not a multiple of the block, which `enqueue` refuses with its reason) as `enqueue`."""
        if not any(g % l for g, l in zip(global_size, local_size)):
            grid = tuple(g // l for g, l in zip(global_size, local_size))
            try:
                return DriverLaunch(self, kernel, global_size, local_size, args, slots,
                                    _dim3(grid), _dim3(local_size))
            except (TypeError, AttributeError):
                pass
        return super().prepare(kernel, global_size, local_size, args, slots)

    def wait_list(self, wait_for: Any) -> list[Any]:
        if wait_for is None:
            return []
        if not isinstance(wait_for, (list, tuple)):
            raise ArgumentTypeError(f"wait_for must be a list of cupy.cuda.Event, got "
                                    f"{type(wait_for).__name__}")
        for i, event in enumerate(wait_for):
            if not isinstance(event, cupy.cuda.Event):
                raise ArgumentTypeError(f"wait_for[{i}] must be a cupy.cuda.Event, got "
                                        f"{type(event).__name__}")
        return list(wait_for)

    def elapsed_ms(self, record: Any) -> float:
        start, end = record
        end.synchronize()
        return float(cupy.cuda.get_elapsed_time(start, end))

    def scratch(self, count: int, queue: Any = None) -> Any:
        """From CuPy's memory pool, which keeps freed blocks per stream."""
        return cupy.empty(max(1, count), dtype=cupy.float32)

    def current_stream(self) -> Callable[[], Any] | None:
        # this GPU's, whichever device is current: a repeated call checks it before it makes
        # its GPU current, and every device has a current stream of its own (the null stream,
        # handle 0, on each), so the current device's would answer for another GPU's
        get, ordinal = cupy.cuda.get_current_stream, int(self.device.handle)
        return lambda: get(ordinal).ptr

    def synchronize(self) -> None:
        cupy.cuda.get_current_stream().synchronize()

    def trim(self) -> None:
        try:
            cupy.get_default_memory_pool().free_all_blocks()
        except Exception:  # pragma: no cover - nothing to free is fine
            pass

    def activate(self) -> ContextManager:
        if getattr(self._threads, "current", False):
            return device_scope(self.device.handle)
        return self._first_scope()

    @contextlib.contextmanager
    def _first_scope(self) -> Iterator[None]:
        with device_scope(self.device.handle):
            self._make_current()
            yield

    def _make_current(self) -> None:
        """Within the device's scope: its primary context made current in this thread, which
        cudaSetDevice does where a scope that finds the device already named does not."""
        cupy.cuda.runtime.setDevice(self.device.handle)
        self._threads.current = True

    def already_active(self) -> Callable[[], bool] | None:
        ordinal, get_device, threads = (self.device.handle, cupy.cuda.runtime.getDevice,
                                        self._threads)

        def active() -> bool:
            if get_device() != ordinal:
                return False
            if not getattr(threads, "current", False):
                self._make_current()  # the same device: only its context made current
            return True
        return active

    def release(self) -> None:
        self._kernels.clear()
        self._modules.clear()
        try:
            cupy.cuda.get_current_stream().synchronize()
        except Exception:  # a failed launch may have left the context unusable
            pass


def open_backend(device: DeviceInfo) -> CUDABackend:
    return CUDABackend(device)


def versions() -> dict[str, object]:
    """The library versions that can change a CUDA result, for provenance."""
    if cupy is None:
        return {}
    out: dict[str, object] = {"cupy": cupy.__version__}
    try:
        out["cuda_driver"] = cupy.cuda.runtime.driverGetVersion()
        out["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
    except Exception:  # no device: versions unknown, not an error
        pass
    return out
