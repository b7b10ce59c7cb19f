"""How the performance bound ranks the tiled kernel's configurations at one shape against what
they measured: every successful measurement in the committed tune journals of one device
(plain .jsonl files and .tgz packs of them under results/), the best of each configuration per
backend, set against its bound (clgemm/model/bound.py) for the device a JSON file records.
Prints Markdown: the measured share of the bound by pipelining and by the sub-groups resident
on a compute unit, then the configurations with the highest bounds beside the best measured.

    python scripts/bound_against_journals.py DEVICE_JSON NAME_PART SIZE [ROOT]

DEVICE_JSON: a clgemm bench JSON whose "device" is the device; NAME_PART: a part of the
journals' folder names (e.g. nvidia-h200); ROOT: where to look (default results)."""

import json
import statistics
import sys
import tarfile
import tempfile
from collections import defaultdict
from pathlib import Path

from clgemm.core.problem import Problem
from clgemm.devices.hardware import hardware_from_record
from clgemm.model.bound import bound
from clgemm.rungs import get_rung
from clgemm.tuner.journal import read_journal

TILED = get_rung(12)
KEYS = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "WIDTH", "VWM", "VWN", "PIPELINE", "WARP_M", "RASTER",
        "UNROLL_K")


def best_measured(root: Path, part: str, size: int) -> dict:
    """{(backend, configuration as sorted items): best GFLOP/s of its searches}, from the
    journals under `root` and those packed in its .tgz files (`tuner.journal.read_journal`)."""
    name = f"rung12-{size}x{size}x{size}.jsonl"
    best: dict = {}
    with tempfile.TemporaryDirectory() as unpacked:
        for i, pack in enumerate(sorted(root.rglob("*.tgz"))):
            with tarfile.open(pack) as tar:
                journals = [m for m in tar.getmembers()
                            if m.isfile() and m.name.endswith("/" + name) and part in m.name]
                tar.extractall(Path(unpacked) / str(i), members=journals,
                               filter=tarfile.data_filter)
        paths = [*root.rglob(name), *Path(unpacked).rglob(name)]
        for path in sorted(p for p in paths if part in p.parent.name):
            head, records, _ = read_journal(path)
            for r in records:
                if r.get("kind", "search") == "search" and r.get("status") == "ok":
                    key = (head["backend"], tuple(sorted(TILED.resolve(r["config"]).items())))
                    best[key] = max(best.get(key, 0.0), float(r["gflops"]))
    return best


def main(device_json: str, part: str, size: int, root: str = "results") -> None:
    hw = hardware_from_record(json.loads(Path(device_json).read_text())["device"])
    problem = Problem(size, size, size)
    rows = []
    for (backend, items), gflops in best_measured(Path(root), part, size).items():
        params = dict(items)
        b = bound(TILED, params, problem, hw)
        rows.append((backend, params, gflops, b))
    print(f"{len(rows)} configurations measured at {size} cubed ({part}); bound for {hw.name}\n")
    # the bound says itself that it ignores spills: configurations it says will spill are out
    fits = [r for r in rows if not (hw.max_registers_per_item
                                    and r[3].occupancy.registers > hw.max_registers_per_item)]
    groups = defaultdict(list)
    for _, params, gflops, b in fits:
        resident = b.occupancy.resident_subgroups
        band = "6-7" if resident < 8 else "8-15" if resident < 16 else "16 or more"
        groups[(params.get("PIPELINE", 0) > 0, band)].append((gflops / b.gflops, gflops))
    print("| pipelined | sub-groups resident per unit | configurations | median measured / bound "
          "| highest | best GFLOP/s |\n|---|---|---|---|---|---|")
    for (piped, band), v in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        shares = [s for s, _ in v]
        print(f"| {'yes' if piped else 'no'} | {band} | {len(v)} | {statistics.median(shares):.2f} "
              f"| {max(shares):.2f} | {max(g for _, g in v):,.0f} |")
    print("\nThe highest bounds, then the best measured (spilling ones left out):\n")
    print("| backend | " + " | ".join(KEYS) + " | bound | measured |\n|" + "---|" * (len(KEYS) + 3))
    for order in (lambda r: -r[3].gflops, lambda r: -r[2]):
        for backend, params, gflops, b in sorted(fits, key=order)[:6]:
            cells = " | ".join(str(params.get(k, 0)) for k in KEYS)
            print(f"| {backend} | {cells} | {b.gflops:,.0f} | {gflops:,.0f} |")


if __name__ == "__main__":
    main(*sys.argv[1:3], int(sys.argv[3]), *sys.argv[4:5])
