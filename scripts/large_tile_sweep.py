"""What each of the top SGEMMs' techniques adds to the tiled kernel on a large square product,
kernel only, each configuration checked against float64 with C poisoned first: the order of the
tiles (RASTER), the shape of a warp's work-items (WARP_M), 256 x 128 / 128 x 256 block tiles and
cp.async pipelines of 2-4 stages (PIPELINE), first each on the stored configuration, then
together; beside the backend's vendor SGEMM. The
first size is swept; each further size measures the stored configuration and the first's five
best.
Usage: python scripts/large_tile_sweep.py DEVICE BACKEND SIZE [SIZE...] [--tiny]"""

import itertools
import sys
import time

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.library import gemm as api
from clgemm.measure.references import vendor_reference
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.rungs.tiled import TILED, warp_block_fits

args = [a for a in sys.argv[1:] if not a.startswith("--")]
dev, backend_name, sizes = args[0], args[1], [int(s) for s in args[2:]]
tiny = "--tiny" in sys.argv  # small tiles, to try the script on a CPU
be = api.backend_for(dev, backend_name)
print(f"# {be.device.name} ({backend_name}), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
      flush=True)


def legal(p: dict) -> bool:
    full = TILED.resolve(p)
    return warp_block_fits(full) and TILED.first_violation(full, be.device.limits()) is None


def show(ws: Workspace, p: dict, label: str, best: list) -> float:
    r = run_rung(be, ws, TILED, p, repeats=7, warmup=2)
    text = TILED.params_text(TILED.resolve(p))
    if r.ok:
        best.append((r.gflops, label, text, tuple(p.items())))
        print(f"  {r.gflops:9,.0f} GFLOP/s  {label:<12} {text}", flush=True)
        return r.gflops or 0.0
    print(f"  {r.status:>15}  {label:<12} {text}: {r.message[:120]}", flush=True)
    return 0.0


top: list = []
for number, size in enumerate(sizes):
    problem = Problem(size, size, size)
    ws = Workspace(be, problem)
    vendor = vendor_reference(be, ws, warmup=2, repeats=7)
    print(f"{size}^3: {vendor['name']} {vendor['gflops'] or 0:,.0f} GFLOP/s ({vendor['status']})",
          flush=True)
    found = lookup.best(be.device, TILED, (size, size, size))
    base = TILED.resolve(dict(found.params)) if found else TILED.resolve({})
    if tiny:
        base = TILED.resolve({"TSM": 32, "TSN": 32, "TSK": 8, "WPTM": 4, "WPTN": 4})
    results: list = []
    base_gflops = show(ws, base, "stored", results)
    if number:
        print(f" the five best at {sizes[0]}^3:")
        for p in top:
            show(ws, p, "earlier", results)
    else:
        print(" the order of the tiles and of the work-items, on the stored configuration:")
        for raster, warp_m in itertools.product((0, 4, 8, 16), (0, 2, 4, 8, 16)):
            p = {**base, "RASTER": raster, "WARP_M": warp_m}
            if (raster or warp_m) and legal(p):
                show(ws, p, f"R{raster} W{warp_m}", results)
        print(" block tiles of 256 x 128 and 128 x 256:")
        tiles = [(64, 64)] if tiny else [(256, 128), (128, 256), (128, 128)]
        per_item = [(4, 4)] if tiny else [(8, 16), (16, 8)]
        vectors = {(base["VWM"], base["VWN"]), (4, 4)}
        for (tm, tn), tk, (wm, wn), (vm, vn), warp_m, raster in itertools.product(
                tiles, (8, 16), per_item, sorted(vectors), (0, 4, 8), (0, 8)):
            p = {**base, "TSM": tm, "TSN": tn, "TSK": tk, "WPTM": wm, "WPTN": wn, "VWM": vm,
                 "VWN": vn, "WARP_M": warp_m, "RASTER": raster}
            if legal(p):
                show(ws, p, f"{tm}x{tn}", results)
        print(" cp.async pipelines (PIPELINE stages), on the stored configuration and on the best:")
        ahead = [base] + [dict(r[3]) for r in sorted(results, key=lambda r: -r[0])[:3]]
        seen = set()
        for start, stages, tk in itertools.product(ahead, (2, 3, 4), (8, 16, 32)):
            p = {**start, "PIPELINE": stages, "TSK": tk}
            key = tuple(sorted(p.items()))
            if key not in seen and legal(p):
                seen.add(key)
                show(ws, p, f"P{stages}", results)
    results.sort(key=lambda r: -r[0])
    if not number:
        top = [dict(r[3]) for r in results[:5]]
    print(f" best of {len(results)} at {size}^3:")
    for g, label, text, _ in results[:5]:
        ratio = f", {g / vendor['gflops']:.3f}x {vendor['name']}" if vendor["gflops"] else ""
        print(f"  {g:9,.0f} GFLOP/s ({g / base_gflops:.3f}x stored{ratio})  {label}  {text}",
              flush=True)
