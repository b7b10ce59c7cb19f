"""What each technique of the fastest SGEMMs adds to the tiled kernel, for `ladder/beyond.md`:
read from the committed sweeps of `scripts/large_tile_sweep.py` (kernel only, every result
checked), one row per sweep, each technique's best against the stored configuration's."""

from __future__ import annotations

import re
from pathlib import Path

from tabulate import tabulate

from clgemm.core.files import is_regular_file
from clgemm.course.tables import link

#: a measured line: GFLOP/s, the label of what was tried, its parameters
_LINE = re.compile(r"^\s+([\d,]+) GFLOP/s\s+(.+?)\s+(TSM=.*)$")
#: the first line of a size: its size and the vendor's GFLOP/s
_SIZE = re.compile(r"^(\d+)\^3: (.+?) ([\d,]+) GFLOP/s \(ok\)")
#: the sweep's own first line: device and backend
_DEVICE = re.compile(r"^# (.+) \((opencl|cuda)\), (\d{4}-\d\d-\d\d)")

#: the techniques, by the labels the sweep gives their configurations
TECHNIQUES = (("orders (RASTER, WARP_M)", lambda label: label.startswith(("R", "W"))),
              ("block tiles up to 256 x 128", lambda label: "x" in label),
              ("cp.async pipeline (PIPELINE)", lambda label: label.startswith("P")))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _first_size(path: Path) -> dict | None:
    """The swept (first) size of one sweep file: device, backend, date, size, vendor, the
    stored configuration's GFLOP/s and each label's measurements."""
    found: dict = {"rows": []}
    for line in path.read_text().splitlines():
        if line.startswith(" best of"):   # the sweep's summary repeats its best lines
            break
        if (m := _DEVICE.match(line)) and "device" not in found:
            found |= {"device": m.group(1), "backend": m.group(2), "date": m.group(3)}
        elif m := _SIZE.match(line):
            if "size" in found:
                break
            found |= {"size": int(m.group(1)), "vendor": m.group(2),
                      "vendor_gflops": _number(m.group(3))}
        elif (m := _LINE.match(line)) and "size" in found:
            found["rows"].append((m.group(2), _number(m.group(1))))
    stored = [g for label, g in found["rows"] if label == "stored"]
    if "device" not in found or "size" not in found or not stored:
        return None
    return found | {"stored": stored[0]}


def sweeps(root: Path) -> list[tuple[Path, dict]]:
    """The committed sweeps under results/ that name the cp.async pipeline (the complete ones)."""
    out = []
    for path in sorted((root / "results").rglob("sweep-*.txt")):
        if is_regular_file(path) and "PIPELINE=" in path.read_text():
            data = _first_size(path)
            if data is not None:
                out.append((path, data))
    return out


def techniques_block(root: Path, here: str = "ladder") -> str:
    """One row per sweep: the stored configuration, the best with each technique (alone or
    with others before it in the sweep's order), the best of all, and the vendor's SGEMM."""
    rows = []
    for path, s in sweeps(root):
        cells = [f"{s['device']} ({'CUDA' if s['backend'] == 'cuda' else 'OpenCL'})",
                 f"{s['size']}³", f"{s['stored']:,.0f}"]
        for _, matches in TECHNIQUES:
            best = max((g for label, g in s["rows"] if matches(label)), default=None)
            cells.append("" if best is None else f"{best:,.0f} ({best / s['stored']:.2f}×)")
        top = max(g for _, g in s["rows"])
        cells += [f"{top:,.0f}", f"{s['vendor']}: {s['vendor_gflops']:,.0f}",
                  f"{top / s['vendor_gflops']:.2f}×",
                  link(path.relative_to(root).as_posix(), here)]
        rows.append(cells)
    if not rows:
        return "No sweep of the tiled kernel's techniques in `results/` yet."
    headers = ["device", "size", "stored", *(name for name, _ in TECHNIQUES), "best",
               "vendor SGEMM", "best / vendor", "sweep"]
    return ("GFLOP/s, kernel only, each result checked against float64; × the stored "
            "configuration's.\n\n" + tabulate(rows, headers, tablefmt="github",
                                              disable_numparse=True))
