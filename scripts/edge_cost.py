"""What the tiled kernel for any size gives up against the tiled kernel with the same tiles,
kernel only, each run as gemm() runs it (K split where gemm() splits it) and checked against
float64: the tiled kernel's stored configuration at SIZE cubed; the same without the tile
orders and the unrolled depth; the kernel for any size with those tiles, with and without its
own order of tiles and unrolled depth where the stored one has them, at SIZE cubed and at
SIZE - 24 cubed (every tile along the edges partial); and its own stored configuration at
SIZE - 24 cubed. All in turn for ROUNDS rounds; the median of each printed with its
parameters and each round's GFLOP/s.
Usage: python scripts/edge_cost.py DEVICE BACKEND ROUNDS SIZE"""

import statistics
import sys

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs.tiled import TILED
from clgemm.rungs.tiled_any import TILED_ANY


def main(dev: str, backend_name: str, rounds: int, size: int) -> None:
    be = api.backend_for(dev, backend_name)
    off = size - 24
    stored = lookup.best(be.device, TILED, (size,) * 3)
    stored_any = lookup.best(be.device, TILED_ANY, (off,) * 3)
    assert stored is not None and stored_any is not None, "nothing stored to start from"
    full = TILED.resolve(dict(stored.params))
    plain = {**full, "RASTER": 0, "WARP_M": 0, "UNROLL_K": 0}
    same = {name: plain[name] for name in TILED_ANY.param_names() if name in plain}
    ordered = {name: full[name] for name in TILED_ANY.param_names() if name in full}
    runs = [(f"tiled, stored at {size}", TILED, full, size),
            ("tiled, no orders or unrolled depth", TILED, plain, size),
            ("tiled-any, those tiles", TILED_ANY, same, size),
            ("tiled-any, those tiles", TILED_ANY, same, off)]
    if ordered != same:
        runs += [("tiled-any, those tiles, orders and unrolled depth", TILED_ANY, ordered, s)
                 for s in (size, off)]
    runs.append((f"tiled-any, stored at {off}", TILED_ANY,
                 TILED_ANY.resolve(dict(stored_any.params)), off))
    spaces = {s: Workspace(be, Problem(s, s, s), seed=s) for s in (size, off)}
    speeds: list[list[float]] = [[] for _ in runs]
    for _ in range(rounds):
        for i, (_, rung, params, s) in enumerate(runs):
            res = run_rung(be, spaces[s], rung, params, repeats=20, warmup=2)
            speeds[i].append(res.gflops if res.ok and res.gflops else float("nan"))
            if not res.ok:
                print(f"  {rung.slug} at {s}: {res.status} {res.message}", flush=True)
    print(f"{be.device.name} ({be.name}), kernel only, median of {rounds} rounds, GFLOP/s")
    for (label, rung, params, s), got in zip(runs, speeds):
        shown = " ".join(f"{k}={v}" for k, v in params.items())
        print(f"  {statistics.median(got):9,.0f}  {label}, {s} cubed :: {shown} :: rounds "
              + " ".join(f"{g:,.0f}" for g in got), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
