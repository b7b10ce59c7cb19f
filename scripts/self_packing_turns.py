"""gemm(a, b, out=c) on square NumPy arrays on a CPU device, in turns: as the tuning in the
results folder chooses it, and with the tiled kernel's self-packing form (PACK_K) forced in
each configuration given (TSM,TSN,PACK_K; pieces of sums one vector of the CPU square, as
`tiled.cpu_self_packing` makes them, copies TSK = 32 steps deep each). For each: the median over ROUNDS rounds of the call's wall time, of its launches' device
time, and their ratio; the launches of one call are named. C is filled with NaN before every
call and every result is checked against float64.
    python scripts/self_packing_turns.py DEVICE N ROUNDS TSM,TSN,PACK_K [...]"""

import statistics
import sys
import time

import numpy as np

import clgemm
from clgemm.configs.configuration import user_config
from clgemm.devices.hardware import cpu_vector_floats
from clgemm.library import gemm as api
from clgemm.rungs.tiled import TILED, cpu_self_packing


def main() -> None:
    device, n, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    backend = api.backend_for(device)
    forms = {"as tuned": None}
    for arg in sys.argv[4:]:
        tsm, tsn, pack_k = (int(x) for x in arg.split(","))
        params = {**cpu_self_packing(cpu_vector_floats(backend.device.name)), "TSM": tsm,
                  "TSN": tsn, "PACK_K": pack_k}
        forms[f"self-packing TSM={tsm} TSN={tsn} PACK_K={pack_k}"] = user_config(
            backend.device, TILED.number, params)
    chooser = api.CACHE.choose
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    want = a.astype(np.float64) @ b.astype(np.float64)
    c = np.empty((n, n), np.float32)
    seen: dict = {k: {"wall": [], "device": [], "names": None, "error": 0.0} for k in forms}
    print(f"# {backend.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
          f"{n}^3, {rounds} rounds in turns, ms")
    for r in range(rounds + 1):  # round 0 builds and warms up, and is not counted
        for key, config in forms.items():
            api.CACHE.choose = chooser if config is None else (lambda d, s, c=config: c)
            api.clear_caches()
            clgemm.gemm(a, b, out=c, device=device)  # the signature's first call, not timed
            c.fill(np.nan)
            with backend.observe() as log:
                t0 = time.perf_counter()
                clgemm.gemm(a, b, out=c, device=device)
                wall = time.perf_counter() - t0
            s = seen[key]
            s["error"] = max(s["error"], float(np.nanmax(np.abs(c - want))) if not np.isnan(c).any()
                             else float("nan"))
            if r:
                s["wall"].append(wall * 1e3)
                s["device"].append(sum(ms for _, ms in log.times()))
                s["names"] = [name for name, _ in log.times()]
    api.CACHE.choose = chooser
    for key, s in seen.items():
        w, d = statistics.median(s["wall"]), statistics.median(s["device"])
        print(f"{key}: call {w:.3f} ({2 * n ** 3 / w * 1e-6:.0f} GFLOP/s), launches {d:.3f}, "
              f"launches / call {d / w:.2f}, {' + '.join(s['names'])}; "
              f"max abs error {s['error']:.2e}", flush=True)


if __name__ == "__main__":
    main()
