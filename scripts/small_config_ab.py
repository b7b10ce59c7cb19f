"""Which of the direct kernel's configurations makes a repeated small call fastest, measured in
turns in one process: each configuration is forced on gemm() (device arrays, C-ordered, C given,
the same call repeated) at every size, round after round, so that a loan's drift falls on all of
them alike. The configurations are the direct kernel's entries of the given databases (the
lookup's choice for that database at each size, so the shipped one and a tune's may be
compared) and any given as NAME=TSM,TSN,TSK,WPTM,WPTN,PAD.
Usage: python scripts/small_config_ab.py DEVICE BACKEND SIZES ROUNDS DATABASE... [NAME=...]"""

import statistics
import sys
from pathlib import Path

import numpy as np

import clgemm
from clgemm.configs.configuration import Config
from clgemm.configs.database import read_any
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side
from clgemm.measure.call_timing import per_call_ms
from clgemm.rungs.direct import DIRECT

dev, backend_name = sys.argv[1], sys.argv[2]
sizes = [int(s) for s in sys.argv[3].split(",")]
rounds = int(sys.argv[4])
be = api.backend_for(dev, backend_name)
side = Side(be, "device")


def nearest(entries: list, size: int) -> dict:
    """The direct kernel's entry of a database nearest in size (log scale) to a square."""
    return dict(min(entries, key=lambda e: abs(np.log2(e.shape[0] / size))).params)


candidates: dict[str, dict[int, dict]] = {}
for arg in sys.argv[5:]:
    if "=" in arg:
        name, values = arg.split("=")
        params = dict(zip(("TSM", "TSN", "TSK", "WPTM", "WPTN", "PAD"), map(int, values.split(","))))
        candidates[name] = {s: params for s in sizes}
    else:
        entries = [e for e in read_any(Path(arg)).entries
                   if e.rung == DIRECT.number and e.batch == 1]
        candidates[Path(arg).stem[:24]] = {s: nearest(entries, s) for s in sizes}

times: dict[tuple[str, int], list[float]] = {}
rng = np.random.default_rng(0)
arrays = {}
for s in sizes:
    arrays[s] = [side.put(rng.standard_normal((s, s), dtype=np.float32)) for _ in range(2)] + [
        side.put(np.zeros((s, s), np.float32))]
original = api.CACHE.choose
for r in range(rounds):
    for name, per_size in candidates.items():
        for s in sizes:
            config = Config(DIRECT.number, DIRECT.resolve(per_size[s]), name)
            api.CACHE.choose = lambda device, shape, c=config: c
            api.clear_caches()
            a, b, c = arrays[s]
            times.setdefault((name, s), []).append(
                per_call_ms(lambda: clgemm.gemm(a, b, c), side.sync) * 1e3)
api.CACHE.choose = original
print(f"{backend_name}: microseconds per call, median of {rounds} rounds in turns (spread)")
for name, per_size in candidates.items():
    cells = [f"{s}^3 {statistics.median(times[name, s]):5.1f} "
             f"({min(times[name, s]):.1f}-{max(times[name, s]):.1f})" for s in sizes]
    print(f"  {name:<24} " + "  ".join(cells))
    for s in sizes:
        print(f"  {'':<24} {s}^3: {per_size[s]}")
