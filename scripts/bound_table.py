"""Print the performance-bound figures of docs/model.md from the committed results.

    .venv/bin/python scripts/bound_table.py

First the H100 ladders (tuned parameters, 4096^3): each rung's measured GFLOP/s against the
performance model's bound for the same parameters, device record and size (clgemm/model/bound.py).
Then, over every committed measurement (clgemm/course/committed.py), the highest share of its bound,
and how many would beat a per-tile DRAM ceiling (every work-group's panels of A and B from
DRAM), the term the model leaves out because a shared cache serves those repeats.
"""

import json
from pathlib import Path

from clgemm.core.problem import Problem
from clgemm.course.committed import device_records, measurements
from clgemm.devices.hardware import hardware_from_record
from clgemm.model.bound import bound
from clgemm.rungs import get_rung

RESULTS = Path(__file__).resolve().parent.parent / "results"
TUNING = RESULTS.parent / "clgemm" / "tuning"   # the shipped tuning databases
LADDERS = {"OpenCL": "h100/ladder-opencl-4096-tuned.json",
           "CUDA": "h100/ladder-cuda-4096-tuned.json"}


def ladder_rows(path: Path) -> dict[int, tuple[float, float, str]]:
    """rung -> (measured GFLOP/s, bound GFLOP/s, limiting term)."""
    data = json.loads(path.read_text())
    hw = hardware_from_record(data["device"])
    out = {}
    for r in data["rows"]:
        if r["status"] == "ok":
            b = bound(get_rung(r["rung"]), r["params"], Problem(*data["size"]), hw)
            out[r["rung"]] = (r["gflops"], b.gflops, b.limit)
    return out


def ladder_table() -> None:
    runs = {name: ladder_rows(RESULTS / f) for name, f in LADDERS.items()}
    head, rule = "| rung |", "|---|"
    for name in runs:
        head += f" {name} GFLOP/s | bound | % of bound | limited by |"
        rule += "---|---|---|---|"
    print(head)
    print(rule)
    for rung in sorted(set().union(*runs.values())):
        line = f"| {rung} |"
        for run in runs.values():
            got, ceiling, limit = run[rung]
            line += f" {got:,.0f} | {ceiling:,.0f} | {100 * got / ceiling:.0f}% | {limit} |"
        print(line)


def summary() -> None:
    records = device_records(RESULTS)
    worst: dict[str, tuple[float, object]] = {}
    per_tile = []
    for m in measurements(RESULTS, TUNING):
        if m.device_key not in records:
            continue
        hw = hardware_from_record(records[m.device_key])
        b = bound(get_rung(m.rung), m.params, m.problem, hw)
        share = b.percent(m.gflops, helpers=m.helpers)
        name = records[m.device_key]["name"] + f" ({records[m.device_key]['backend']})"
        if share > worst.get(name, (0.0, None))[0]:
            worst[name] = (share, m)
        tile_ceiling = b.flops / b.tile_bytes * hw.mem_gbps
        if m.gflops > tile_ceiling:
            per_tile.append((m.gflops / tile_ceiling, m, tile_ceiling))
    print()
    for name, (share, m) in sorted(worst.items()):
        print(f"- {name}: at most {share:.0f}% of the bound (rung {m.rung}, {m.kind}, "
              f"{' '.join(f'{k}={v}' for k, v in m.params.items())})")
    print(f"- results above a per-tile DRAM ceiling: {len(per_tile)}")
    for ratio, m, ceiling in sorted(per_tile, key=lambda t: -t[0])[:3]:
        print(f"  - rung {m.rung} {' '.join(f'{k}={v}' for k, v in m.params.items())} "
              f"({m.kind}, {'x'.join(map(str, m.shape))}): {m.gflops:,.0f} GFLOP/s against "
              f"{ceiling:,.0f}")


if __name__ == "__main__":
    ladder_table()
    summary()
