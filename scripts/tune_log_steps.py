"""Each step of plain tunes side by side: the configurations a step measured and the best speed it
stored, read from the summary table at the end of each tune's log (`clgemm tune`'s output).

    python3 scripts/tune_log_steps.py LABEL=LOG [LABEL=LOG ...]

Prints a Markdown table, one row per rung and shape, one pair of columns per log ("–" where a
log has no such step)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: a row of the summary table: rung, name, shape, measured, failed (a count, or a status and its
#: count), then parameters and speeds
_ROW = re.compile(r"^(\d+)\s+(\S+)\s+(\d+(?:x\d+){2,3})\s+(\d+)\s+((?:[a-z-]+ )?\d+)\s+(.*)$")
_GFLOPS = re.compile(r"\s(\d+\.\d+)\s")


def steps(log: Path) -> dict[tuple[int, str], tuple[int, float]]:
    """(rung, shape) -> (configurations measured, GFLOP/s stored), from the log's last table."""
    lines = log.read_text().splitlines()
    heads = [i for i, line in enumerate(lines) if line.startswith("rung  name ")]
    if not heads:
        raise SystemExit(f"{log}: no summary table (did the tune finish?)")
    found: dict[tuple[int, str], tuple[int, float]] = {}
    for line in lines[heads[-1] + 2:]:
        row = _ROW.match(line)
        if row is None:
            continue
        speed = _GFLOPS.search(f" {row.group(6)} ")
        found[(int(row.group(1)), row.group(3))] = (int(row.group(4)),
                                                    float(speed.group(1)) if speed else 0.0)
    return found


def main(args: list[str]) -> None:
    if not args or any("=" not in a for a in args):
        raise SystemExit(__doc__)
    runs = [(label, steps(Path(path))) for label, path in (a.split("=", 1) for a in args)]
    keys = list(dict.fromkeys(k for _, found in runs for k in found))
    print("| rung | shape | " + " | ".join(f"{label}: measured | {label}: GFLOP/s"
                                           for label, _ in runs) + " |")
    print("|---|---|" + "---|---|" * len(runs))
    for rung, shape in keys:
        cells = []
        for _, found in runs:
            if (rung, shape) in found:
                measured, gflops = found[(rung, shape)]
                cells += [str(measured), f"{gflops:,.0f}"]
            else:
                cells += ["–", "–"]
        print(f"| {rung} | {shape} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
