"""What the model's seeds (`tuner.plan.bound_seeds`, the configurations of a sample of the space
with the highest performance bound) measured in a plain tune of the tiled kernel, beside the
best its step measured: each tiled-kernel journal of DIR, the seeds recomputed for the device
that a bench JSON file of the same machine records (its "device"), without the device at hand.
    python scripts/model_seeds_measured.py DIR BENCH_JSON"""

import glob
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from clgemm.core.problem import Problem
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs.tiled import TILED
from clgemm.tuner.journal import read_journal
from clgemm.tuner.plan import bound_seeds
from clgemm.tuner.space import build_space


def recorded_device(path: str) -> SimpleNamespace:
    """The device a bench JSON file records, as much of it as the seeds' model and funnel read."""
    with open(path) as f:
        record = json.load(f)["device"]
    limits = DeviceLimits(max_work_group_size=record["max_work_group_size"],
                          max_work_item_sizes=tuple(record["max_work_item_sizes"]),
                          local_mem_bytes=record["local_mem_bytes"],
                          compute_units=record["compute_units"], device_type=record["type"])
    return SimpleNamespace(name=record["name"], clock_mhz=record["clock_mhz"],
                           limits=lambda: limits)


def measured(path: str) -> dict[str, tuple[float, float]]:
    """Each configuration's GFLOP/s in the journal's search and the seconds its measurement
    took, by its full parameter set."""
    out = {}
    for r in read_journal(Path(path))[1]:
        if r.get("kind") == "search" and "config" in r:
            key = json.dumps(TILED.resolve(r["config"]), sort_keys=True)
            out[key] = (r.get("gflops") or 0.0, r.get("eval_s") or 0.0)
    return out


def main() -> None:
    folder, bench = sys.argv[1], sys.argv[2]
    device = recorded_device(bench)
    for path in sorted(glob.glob(f"{folder}/rung12-*.jsonl")):
        m, n, k = map(int, path.rsplit("rung12-", 1)[1].removesuffix(".jsonl").split("x"))
        speeds = measured(path)
        space = build_space(TILED, device.limits(), Problem(m, n, k))
        seeds = bound_seeds(device, TILED, space, (m, n, k))
        got = [speeds.get(json.dumps(TILED.resolve(p), sort_keys=True)) for p in seeds]
        shown = ", ".join("not measured" if g is None else f"{g[0]:.1f}" for g in got)
        spent = sum(g[1] for g in got if g is not None)
        print(f"{m}x{n}x{k}: the step's best {max(g for g, _ in speeds.values()):.1f} GFLOP/s; "
              f"the model's seeds {shown}, measured in {spent:.1f} s")


if __name__ == "__main__":
    main()
