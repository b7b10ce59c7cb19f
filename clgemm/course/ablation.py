"""The beyond page's table of what each technique adds to the tiled kernel's stored
configuration on each device measured: read from the committed runs of
`scripts/technique_ablation.py` (results/**/ablation-*.txt), the first size of each."""

from __future__ import annotations

import re
from pathlib import Path

from tabulate import tabulate

from clgemm.core.files import is_regular_file
from clgemm.course.tables import link
from clgemm.tuner.ablation import MEASURED, REFUSED, TECHNIQUES

#: the run's own first line: device, backend, date
_DEVICE = re.compile(r"^# (.+) \((opencl|cuda)\), (\d{4}-\d\d-\d\d)")
#: the first line of a size
_SIZE = re.compile(r"^(\d+)\^3: ")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _first_size(path: Path) -> dict | None:
    """Device, backend, size, the stored configuration's GFLOP/s and, per technique label,
    the GFLOP/s without it (or the status of a variant that did not run)."""
    found: dict = {"without": {}}
    for line in path.read_text().splitlines():
        if (m := _DEVICE.match(line)) and "device" not in found:
            found |= {"device": m.group(1), "backend": m.group(2), "date": m.group(3)}
        elif m := _SIZE.match(line):
            if "size" in found:
                break
            found["size"] = int(m.group(1))
        elif "size" not in found:
            continue
        elif m := MEASURED.match(line):
            if m.group(2) == "stored":
                found["stored"] = _number(m.group(1))
            else:
                found["without"][m.group(3)] = _number(m.group(1))
        elif m := REFUSED.match(line):
            found["without"][m.group(2)] = m.group(1)
    if not {"device", "size", "stored"} <= found.keys():
        return None
    return found


def ablation_block(root: Path, here: str = "ladder") -> str:
    """One row per run: the stored configuration's GFLOP/s, then for each technique it uses
    its GFLOP/s without that technique and how many times faster it is with it."""
    rows = []
    for path in sorted((root / "results").rglob("ablation-*.txt")):
        if not is_regular_file(path) or (run := _first_size(path)) is None:
            continue
        cells = [f"{run['device']} ({'CUDA' if run['backend'] == 'cuda' else 'OpenCL'})",
                 f"{run['size']}³", f"{run['stored']:,.0f}"]
        for technique in TECHNIQUES:
            got = run["without"].get(technique.label)
            if isinstance(got, float) and got > 0:
                cells.append(f"{got:,.0f} ({run['stored'] / got:.2f}×)")
            else:
                cells.append("" if got is None else str(got))
        cells.append(link(path.relative_to(root).as_posix(), here))
        rows.append(cells)
    if not rows:
        return "No run of `scripts/technique_ablation.py` in `results/` yet."
    headers = ["device", "size", "stored", *(t.label for t in TECHNIQUES), "run"]
    return ("GFLOP/s, kernel only, each result checked against float64, the median of the "
            "run's rounds: the stored configuration, then under each technique the same "
            "configuration without it; (n×): the stored configuration is n times as fast as it "
            "is without the technique. Blank: the stored configuration does not use it.\n\n"
            + tabulate(rows, headers, tablefmt="github", disable_numparse=True))
