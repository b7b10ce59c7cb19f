"""Whether a CPU kernel that packs its own blocks of A and B, block by block of K into local
memory, runs the call faster than gemm()'s pack of both operands followed by the tiled kernel
on the panels. `scripts/cpu_blocks.cl` is that kernel, outside the library: one work-item a
group, a group a block of GM x GN sums of MR x NR, blocks of KC steps of K (BCOLS 0: B's block
turned k-major as it is copied; 1: B's columns copied as they lie, padded apart). For C := A B
on square C-ordered NumPy arrays of size N, C given and filled with NaN before each call, in
turns for ROUNDS rounds: each configuration (its buffers made over the arrays, one launch, C
mapped back), clgemm.gemm(a, b, out=c) with whatever tuning the results folder holds, and
NumPy's matmul into C. Every result is checked against float64. Medians of the wall times,
and of the kernel's device time for the configurations.
    python scripts/cpu_blocks_probe.py DEVICE N ROUNDS MR,NR,GM,GN,KC,BCOLS [...]"""

import datetime
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyopencl as cl

import clgemm

SOURCE = Path(__file__).with_name("cpu_blocks.cl").read_text()


def cpu_device(name: str) -> cl.Device:
    """The first CPU device whose name holds `name` ("0": the first CPU device)."""
    found = [d for p in cl.get_platforms() for d in p.get_devices()
             if d.type & cl.device_type.CPU and (name == "0" or name.lower() in d.name.lower())]
    if not found:
        sys.exit(f"no CPU device named {name!r}")
    return found[0]


def build(ctx: cl.Context, cfg: tuple[int, ...]) -> cl.Kernel:
    names = ("MR", "NR", "GM", "GN", "KC", "BCOLS")
    options = [f"-D{k}={v}" for k, v in zip(names, cfg)]
    return cl.Kernel(cl.Program(ctx, SOURCE).build(options=options), "gemm_blocks")


def blocks_call(ctx, queue, knl, cfg, a, b, c) -> tuple[float, float]:
    """One call of the probe's kernel, as gemm() would make it: C = a @ b on C-ordered arrays
    is C^T = b^T a^T column-major, so its A is b as it lies and its B is a. Wall and kernel
    seconds."""
    n = a.shape[0]
    mr, nr, gm, gn = cfg[:4]
    flags = cl.mem_flags
    t0 = time.perf_counter()
    buf_a = cl.Buffer(ctx, flags.READ_ONLY | flags.USE_HOST_PTR, hostbuf=b)
    buf_b = cl.Buffer(ctx, flags.READ_ONLY | flags.USE_HOST_PTR, hostbuf=a)
    buf_c = cl.Buffer(ctx, flags.WRITE_ONLY | flags.USE_HOST_PTR, hostbuf=c)
    knl.set_args(np.int32(n), np.int32(n), np.int32(n), buf_a, buf_b, buf_c)
    event = cl.enqueue_nd_range_kernel(queue, knl, (n // (mr * gm), n // (nr * gn)), (1, 1))
    mapped, _ = cl.enqueue_map_buffer(queue, buf_c, cl.map_flags.READ, 0, c.shape, c.dtype)
    mapped.base.release()
    queue.finish()
    return time.perf_counter() - t0, (event.profile.end - event.profile.start) * 1e-9


def main() -> None:
    name, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    configs = [tuple(int(x) for x in arg.split(",")) for arg in sys.argv[4:]]
    for mr, nr, gm, gn, kc, _ in configs:
        if n % (mr * gm) or n % (nr * gn) or n % kc:
            sys.exit(f"{n} is not a multiple of the blocks of {mr},{nr},{gm},{gn},{kc}")
    dev = cpu_device(name)
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {dev.name} ({dev.max_compute_units} compute units, {dev.platform.version}), "
          f"pyopencl {cl.VERSION_TEXT}, NumPy {np.__version__}, {now}, at commit {commit}: "
          f"python scripts/cpu_blocks_probe.py {' '.join(sys.argv[1:])}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    c = np.empty((n, n), np.float32)
    kernels = {cfg: build(ctx, cfg) for cfg in configs}
    calls = {
        **{cfg: (lambda cfg=cfg: blocks_call(ctx, queue, kernels[cfg], cfg, a, b, c))
           for cfg in configs},
        "clgemm.gemm()": lambda: (clgemm.gemm(a, b, out=c, device=name), None),
        "NumPy": lambda: (np.matmul(a, b, out=c), None),
    }
    walls: dict = {key: [] for key in calls}
    kernel_s: dict = {key: [] for key in calls}
    worst: dict = {key: 0.0 for key in calls}
    for r in range(rounds + 1):   # round 0 warms up and is not counted
        for key, call in calls.items():
            c.fill(np.nan)
            t0 = time.perf_counter()
            _, k = call()
            wall = time.perf_counter() - t0
            worst[key] = max(worst[key], float(np.abs(c - want).max()))  # NaN if unwritten
            if r:
                walls[key].append(wall)
                if k is not None:
                    kernel_s[key].append(k)
    flops = 2.0 * n ** 3
    for key in calls:
        label = ("blocks MR=%d NR=%d GM=%d GN=%d KC=%d BCOLS=%d" % key
                 if isinstance(key, tuple) else key)
        w = statistics.median(walls[key])
        line = f"{n}^3 {label}: call {w * 1e3:.2f} ms ({flops / w * 1e-9:.0f} GFLOP/s)"
        if kernel_s[key]:
            k = statistics.median(kernel_s[key])
            line += f", kernel {k * 1e3:.2f} ms ({flops / k * 1e-9:.0f}), call/kernel {k / w:.2f}"
        print(f"{line}, max error {worst[key]:.2e}", flush=True)


if __name__ == "__main__":
    main()
