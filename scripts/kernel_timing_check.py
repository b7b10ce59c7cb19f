"""How a small product's kernel time reads by each way of timing it: what the tuner's
`Backend.launch` gives (events around one launch queued on an idle device), the same launch
queued behind a kernel that holds the device for a while (so the launch is waiting when its
start event fires: the device's time alone), and a run of launches back to back between two
events (what a repeated call sees), beside gemm()'s own time per call.
Usage: python scripts/kernel_timing_check.py DEVICE BACKEND SIZE[,SIZE...] [REPEATS]"""

import statistics
import sys
import time

import numpy as np
from bound_launch import bound_launch

import clgemm
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side
from clgemm.measure.call_timing import per_call_ms

dev, backend_name, sizes = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3].split(",")]
repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 20
be = api.backend_for(dev, backend_name)
side = Side(be, "device")
RUN = 200

if backend_name == "cuda":
    import cupy
    hold_kernel = cupy.RawKernel(r'''extern "C" __global__ void hold(long long cycles) {
        long long t0 = clock64(); while (clock64() - t0 < cycles) {} }''', "hold")

    def held_ms(fn):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        hold_kernel((1,), (1,), (np.int64(200_000),))  # about 100 us at 2 GHz
        start.record()
        fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end)

    def run_ms(fn):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        hold_kernel((1,), (1,), (np.int64(2_000_000),))  # about 1 ms: the run is queued first
        start.record()
        for _ in range(RUN):
            fn()
        end.record()
        end.synchronize()
        return cupy.cuda.get_elapsed_time(start, end) / RUN
else:
    import pyopencl as cl

    def held_ms(fn):
        event = fn()
        event.wait()
        return (event.profile.end - event.profile.start) * 1e-6

    def run_ms(fn):
        events = [fn() for _ in range(RUN)]
        events[-1].wait()
        return (events[-1].profile.end - events[0].profile.start) * 1e-6 / RUN

for s in sizes:
    rng = np.random.default_rng(0)
    a = side.put(rng.standard_normal((s, s), dtype=np.float32))
    b = side.put(rng.standard_normal((s, s), dtype=np.float32))
    c = side.put(np.zeros((s, s), np.float32))
    api.CACHE.hot.clear()
    clgemm.gemm(a, b, c)
    side.sync()
    call_us = per_call_ms(lambda: clgemm.gemm(a, b, c), side.sync) * 1e3
    hot, launch, args = bound_launch(a, b, c)
    if hot is None:
        print(f"{backend_name} {s}^3: more than one launch, skipped")
        continue
    knl, gsize, lsize = launch.kernel, launch.global_size, launch.local_size
    tuner = [be.launch(knl, gsize, lsize, args) for _ in range(repeats)]
    # on the backend's own queue, which profiles on OpenCL (the arrays' queue does not)
    held = [held_ms(lambda: be.enqueue(knl, gsize, lsize, args)) for _ in range(repeats)]
    runs = [run_ms(lambda: be.enqueue(knl, gsize, lsize, args)) for _ in range(5)]
    side.sync()

    def us(xs):
        return (f"{statistics.median(xs) * 1e3:6.1f} us (spread {min(xs) * 1e3:.1f}-"
                f"{max(xs) * 1e3:.1f})")
    print(f"{backend_name} {s}^3 {hot.program.plan.choice.describe() if hasattr(hot.program.plan, 'choice') else ''}: "
          f"gemm() {call_us:6.1f} us per call; one launch as the tuner times it {us(tuner)}; "
          f"held {us(held)}; {RUN} back to back {us(runs)} each", flush=True)
    del a, b, c
    time.sleep(0.1)
