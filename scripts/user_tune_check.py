"""A user's first small tune must never slow gemm() down: the kernel gemm() chooses and its time
at several shapes, before and after `clgemm tune --rungs 3 --size 128 --budget 8` writes the
user's own database for the device.

    python scripts/user_tune_check.py --device NAME [--backend opencl|cuda]

Runs in a fresh results folder (CLGEMM_RESULTS), so the user's real tuning is not touched.
Prints one row per shape: the choice and gemm()'s median time on NumPy arrays, before and after.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api

SHAPES = (256, 512, 1024, 2048)


def timed(device: str, backend: str | None, n: int, repeats: int = 7) -> float:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = clgemm.gemm(a, b, device=device, backend=backend)
    err = np.linalg.norm(c - a.astype(np.float64) @ b) / np.linalg.norm(a.astype(np.float64) @ b)
    assert err < 1e-4, f"wrong result at {n}: {err}"
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        clgemm.gemm(a, b, device=device, backend=backend)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def state(device: str, backend: str | None) -> dict[int, tuple[str, float]]:
    api.clear_caches()
    return {n: (clgemm.configure(device, shape=n, backend=backend).describe(),
                timed(device, backend, n)) for n in SHAPES}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", required=True)
    parser.add_argument("--backend", default=None)
    args = parser.parse_args()
    os.environ["CLGEMM_RESULTS"] = tempfile.mkdtemp(prefix="clgemm-user-tune-")
    before = state(args.device, args.backend)
    cmd = [sys.executable, "-m", "clgemm", "tune", "--device", args.device, "--rungs", "3",
           "--size", "128", "--budget", "8"]
    if args.backend:
        cmd += ["--backend", args.backend]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = state(args.device, args.backend)
    info = clgemm.devices()
    name = next(d.name for d in info if args.device.lower() in d.name.lower()
                and (args.backend is None or d.backend == args.backend))
    print(f"# python scripts/user_tune_check.py --device {args.device}"
          f"{' --backend ' + args.backend if args.backend else ''}; {name}; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; "
          f"clgemm {clgemm.__version__}; tune between: {' '.join(cmd[3:])}")
    print(f"{'size':>5}  {'ms before':>9}  {'ms after':>9}  {'after/before':>12}  choice before"
          f" -> after")
    worst = 0.0
    for n in SHAPES:
        (c0, t0), (c1, t1) = before[n], after[n]
        worst = max(worst, t1 / t0)
        print(f"{n:5}  {t0:9.3f}  {t1:9.3f}  {t1 / t0:12.2f}  {c0} -> {c1}")
    print(f"slowest after/before: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
