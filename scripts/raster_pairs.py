"""The configurations a tune journal measured both in the launch's order of tiles (RASTER=0)
and in bands (RASTER > 0), side by side: what the order alone changed, in that journal's
GFLOP/s (each a median of the tune's own repeats).
    python scripts/raster_pairs.py JOURNAL [JOURNAL...]"""

import sys
from pathlib import Path

from clgemm.tuner.journal import read_journal


def pairs(path: str) -> list[str]:
    """One line per configuration measured at more than one RASTER, by its other values."""
    by_rest: dict[tuple, dict[int, float]] = {}
    for record in read_journal(Path(path))[1]:
        if record.get("status") != "ok" or not record.get("gflops"):
            continue
        config = record["config"]
        rest = tuple(sorted((k, v) for k, v in config.items() if k != "RASTER"))
        by_rest.setdefault(rest, {})[config.get("RASTER", 0)] = record["gflops"]
    lines, ratios = [], []
    shown_names = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "WIDTH", "VWM", "VWN", "CACHE_A",
                   "CACHE_B", "PANELS")
    for rest, speeds in by_rest.items():
        if len(speeds) < 2 or 0 not in speeds:
            continue
        shown = " ".join(f"{k}={v}" for k, v in rest if k in shown_names)
        banded = max(r for r in speeds if r)
        ratios.append(speeds[banded] / speeds[0])
        lines.append(f"{shown}: RASTER=0 {speeds[0]:.1f}, RASTER={banded} "
                     f"{speeds[banded]:.1f} ({ratios[-1]:.2f}x)")
    if ratios:
        ratios.sort()
        lines.append(f"{len(ratios)} pairs: banded over launch order, median "
                     f"{ratios[len(ratios) // 2]:.2f}x, lowest {ratios[0]:.2f}x, highest "
                     f"{ratios[-1]:.2f}x")
    return lines


def main() -> None:
    for path in sys.argv[1:]:
        print(f"# {path}")
        for line in pairs(path):
            print(line)


if __name__ == "__main__":
    main()
