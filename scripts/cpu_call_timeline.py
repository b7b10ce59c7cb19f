"""Where the wall time of gemm(a, b, out=c) on NumPy arrays goes on a CPU device: the host's
time before its first launch is queued, each launch's device time, the gaps between launches,
and the time from the last launch's end to the call's return, for square SIZEs, C given, from
whichever package is first on PYTHONPATH. Each row is the median of ROUNDS calls (after three
warm ones); the result of the last is checked against NumPy. The device clock is read through
the launch events and put on the host's clock by the first launch's queued time, which both
see, so only differences on one clock are printed.
    python scripts/cpu_call_timeline.py DEVICE ROUNDS SIZE [SIZE...]"""

import statistics
import sys
import time

import numpy as np
import pyopencl as cl

import clgemm
from clgemm.backends.opencl import prepared
from clgemm.library import gemm as api

_first_enqueue: list[float] = []
_enqueue = cl.enqueue_nd_range_kernel


def _marked(*args, **kwargs):  # the host time at which the call's first launch is queued
    if not _first_enqueue:
        _first_enqueue.append(time.perf_counter())
    return _enqueue(*args, **kwargs)


prepared.cl.enqueue_nd_range_kernel = _marked


def one_call(backend, a, b, c, device: str) -> dict[str, float]:
    """One observed call's parts, in milliseconds."""
    _first_enqueue.clear()
    with backend.observe() as log:
        t0 = time.perf_counter()
        clgemm.gemm(a, b, out=c, device=device)
        t1 = time.perf_counter()
    events = [(name, record.profile) for name, record in log.records]
    queued0 = events[0][1].queued
    parts = {"host before first launch": (_first_enqueue[0] - t0) * 1e3}
    prev_end = queued0
    for i, (name, p) in enumerate(events):
        parts[f"{i}: wait before {name}"] = (p.start - prev_end) * 1e-6
        parts[f"{i}: {name}"] = (p.end - p.start) * 1e-6
        prev_end = p.end
    # the host saw the first launch queued at _first_enqueue[0] (about the device's queued0)
    parts["after last launch"] = (t1 - _first_enqueue[0]) * 1e3 - (prev_end - queued0) * 1e-6
    parts["wall"] = (t1 - t0) * 1e3
    return parts


def main() -> None:
    device, rounds = sys.argv[1], int(sys.argv[2])
    backend = api.backend_for(device)
    rng = np.random.default_rng(0)
    print(f"# {backend.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"clgemm from {clgemm.__file__.rsplit('/', 3)[-3]}: median of {rounds} calls, ms")
    for n in map(int, sys.argv[3:]):
        a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
        c = np.empty((n, n), np.float32)
        for _ in range(3):
            clgemm.gemm(a, b, out=c, device=device)
        rows = [one_call(backend, a, b, c, device) for _ in range(rounds)]
        error = float(np.max(np.abs(c - a.astype(np.float64) @ b)))
        parts = ", ".join(f"{key} {statistics.median(r[key] for r in rows):.3f}"
                          for key in rows[0])
        print(f"{n}^3: {parts}; max abs error {error:.2e}", flush=True)


if __name__ == "__main__":
    main()
