"""Does a first launch of gemm()'s kernels behind a user event that is not complete yet crash
NVIDIA's OpenCL driver, and does waiting through a marker instead avoid it?

    python scripts/nvidia_user_event.py [--device NAME]

Each variant runs in a fresh process (a crash ends only that process) and prints its outcome.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = r"""
import sys, time, numpy as np, pyopencl as cl, pyopencl.array as cla
import clgemm
from clgemm.library import gemm as api, order
variant, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
dev = next(d for p in cl.get_platforms() for d in p.get_devices() if name.lower() in d.name.lower())
ctx = cl.Context([dev])
ooo = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
q = cl.CommandQueue(ctx, properties=ooo) if variant.startswith("ooo") else cl.CommandQueue(ctx)
if variant == "marker":
    real = order.LaunchOrder.__init__
    def init(self, backend, queue, wait_for):
        if any(isinstance(e, cl.UserEvent) for e in wait_for):
            wait_for = [cl.enqueue_marker(queue or backend.queue, wait_for=wait_for)]
        real(self, backend, queue, wait_for)
    order.LaunchOrder.__init__ = init
rng = np.random.default_rng(0)
a = rng.standard_normal((n, n)).astype(np.float32); b = rng.standard_normal((n, n)).astype(np.float32)
da, db = cla.to_device(q, a), cla.to_device(q, b); q.finish()
gate = cl.UserEvent(ctx)
if variant.endswith("array"):
    da.add_event(gate)
    c = clgemm.gemm(da, db)
else:
    c = clgemm.gemm(da, db, wait_for=[gate])
time.sleep(0.2)
gate.set_status(cl.command_execution_status.COMPLETE)
got = c.get()
err = np.linalg.norm(got - a.astype(np.float64) @ b) / np.linalg.norm(a.astype(np.float64) @ b)
print(f"{variant} n={n}: relative error {err:.2e}")
"""


def main() -> int:
    name = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "NVIDIA"
    for variant in ("plain", "plain-array", "ooo", "ooo-array", "marker"):
        for n in (96, 400, 1024):
            try:
                p = subprocess.run([sys.executable, "-c", CHILD, variant, name, str(n)],
                                   capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                print(f"{variant:7} n={n:5}: hung (no answer in 120 s)", flush=True)
                continue
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
            print(f"{variant:7} n={n:5}: exit {p.returncode} {line}"
                  f"{'' if p.returncode == 0 else ' ' + p.stderr.strip()[-160:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
