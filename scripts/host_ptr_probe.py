"""Whether a CPU device's OpenCL driver works in a NumPy array's own memory when given it with
USE_HOST_PTR, or in a copy of its own: for square float32 arrays of each SIZE, as NumPy
allocates them and at an address rounded to 4096 bytes, the address modulo 4096, whether a
blocking map returns the array's own address, and the milliseconds (median of 5) of making the
buffer, running a kernel that writes it, and mapping it back.
    python scripts/host_ptr_probe.py DEVICE SIZE [SIZE...]"""

import statistics
import sys
import time

import numpy as np
import pyopencl as cl

from clgemm.backends import select_device, shared_backend

SOURCE = "__kernel void touch(__global float* x) { x[get_global_id(0)] += 1.0f; }"


def aligned(n: int) -> np.ndarray:
    """An n x n float32 array whose first float lies at a multiple of 4096 bytes."""
    raw = np.empty(n * n + 1024, dtype=np.float32)
    skip = (-raw.ctypes.data % 4096) // 4
    return raw[skip:skip + n * n].reshape(n, n)


def probe(ctx: cl.Context, queue: cl.CommandQueue, knl: cl.Kernel, x: np.ndarray) -> str:
    times, same = [], True
    for _ in range(5):
        start = time.perf_counter()
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR, hostbuf=x)
        knl(queue, (x.size,), None, buf)
        mapped, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ, 0, x.shape, x.dtype,
                                          is_blocking=True)
        same = same and mapped.ctypes.data == x.ctypes.data
        mapped.base.release(queue)
        queue.finish()
        times.append((time.perf_counter() - start) * 1e3)
    return (f"address % 4096 = {x.ctypes.data % 4096:4d}, map returns the array's own memory: "
            f"{same}, {statistics.median(times):.2f} ms")


def main(device: str, sizes: list[int]) -> None:
    info = select_device(device, backend="opencl")
    be = shared_backend(info)
    ctx, queue = be.context, be.queue  # type: ignore[attr-defined]
    knl = cl.Program(ctx, SOURCE).build().touch
    print(f"# {info.name} ({info.version}, {info.driver_version}), "
          f"base address alignment {ctx.devices[0].mem_base_addr_align} bits")
    for n in sizes:
        print(f"{n}^2 as NumPy allocates: {probe(ctx, queue, knl, np.ones((n, n), np.float32))}")
        print(f"{n}^2 at 4096 bytes:      {probe(ctx, queue, knl, aligned(n))}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], [int(s) for s in sys.argv[2:]])
