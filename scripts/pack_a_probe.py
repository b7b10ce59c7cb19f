"""Whether the tiled kernel for any size runs faster on an A packed just before it than on the
caller's A read where it lies, at sizes on its vector width: gemm() at SIZE cubed on device
arrays into a given C, as planned and with both operands packed (the plan's padded form, which
on the width packs them tight), in turn for ROUNDS rounds. Each variant's result is checked
against float64; printed per round: microseconds per call over CALLS repeated calls, and each
launch's device time in one more call.
Usage: python scripts/pack_a_probe.py DEVICE BACKEND ROUNDS SIZE [SIZE...]"""

import statistics
import sys
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.library import plan as plans
from clgemm.measure.call_bench import Side
from clgemm.rungs.tiled_any import TILED_ANY

CALLS = 300
AS_PLANNED = plans._plan_padding


def packed(plan, pads):
    """Both operands packed, whole vectors apart, wherever the kernel for any size runs."""
    if plan.chosen.rung == TILED_ANY.number:
        plan.padded_ld, plan.pack_a, plan.pack_b = True, True, True


def timed(be, side, a, b, c):
    clgemm.gemm(a, b, c)
    side.sync()
    t0 = time.perf_counter()
    for _ in range(CALLS):
        clgemm.gemm(a, b, c)
    side.sync()
    us = (time.perf_counter() - t0) / CALLS * 1e6
    with be.observe() as log:
        clgemm.gemm(a, b, c)
        side.sync()
    return us, log.times()


def main(dev, backend_name, rounds, sizes):
    be = api.backend_for(dev, backend_name)
    side = Side(be, "device")
    rng = np.random.default_rng(0)
    for size in sizes:
        ha = rng.standard_normal((size, size), dtype=np.float32)
        hb = rng.standard_normal((size, size), dtype=np.float32)
        want = ha.astype(np.float64) @ hb
        a, b, c = side.put(ha), side.put(hb), side.nan((size, size))
        seen = {"as planned": [], "both packed": []}
        for r in range(rounds):
            for name, rule in (("as planned", AS_PLANNED), ("both packed", packed)):
                plans._plan_padding = rule
                api.clear_caches()
                us, launches = timed(be, side, a, b, c)
                err = np.abs(side.get(c) - want).max() / np.abs(want).max()
                assert err < 1e-5, (name, size, err)
                seen[name].append(us)
                print(f"{size}^3 {backend_name} round {r + 1} {name:12s} {us:7.1f} us a call; "
                      + ", ".join(f"{k} {ms * 1e3:.1f}" for k, ms in launches), flush=True)
        plans._plan_padding = AS_PLANNED
        print(f"{size}^3 {backend_name}: median as planned "
              f"{statistics.median(seen['as planned']):.1f} us, both packed "
              f"{statistics.median(seen['both packed']):.1f} us", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(s) for s in sys.argv[4:]])
