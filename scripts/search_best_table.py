"""The best of each tiled-kernel search journal in a folder, and when the search reached it:
the journals `results/h200/combined-variants/run.sh` keeps, named
journal-BACKEND-SEARCH-PACKAGE-TURN.jsonl.

    python3 scripts/search_best_table.py FOLDER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SEARCHES = {"plain": "the plain tune's step (45 s, the model's seeds)", "timed": "--time 45"}


def _row(path: Path) -> str:
    _, backend, search, package, turn = path.stem.split("-")
    lines = path.read_text().splitlines()[1:]
    found = [r for r in map(json.loads, lines) if r.get("kind") == "search" and r.get("config")]
    at, best = max(enumerate(found, start=1), key=lambda ir: ir[1].get("gflops") or 0.0)
    c = best["config"]
    what = (f"{c['TSM']}x{c['TSN']}x{c['TSK']} tile, {c['WPTM']}x{c['WPTN']} sums, "
            f"VWM={c['VWM']} VWN={c['VWN']}, PIPELINE={c['PIPELINE']}, WARP_M={c['WARP_M']}, "
            f"RASTER={c['RASTER']}, UNROLL_K={c['UNROLL_K']}")
    return (f"| {backend} | {SEARCHES.get(search, search)} | {package} | {turn} | {len(found)} "
            f"| {best['gflops']:,.0f} | {at} | {what} |")


def main(args: list[str]) -> None:
    if len(args) != 1:
        raise SystemExit(__doc__)
    print("| backend | search | package | turn | measured | best GFLOP/s | reached at | "
          "configuration |")
    print("|---|---|---|---|---|---|---|---|")
    for path in sorted(Path(args[0]).glob("journal-*.jsonl")):
        print(_row(path))


if __name__ == "__main__":
    main(sys.argv[1:])
