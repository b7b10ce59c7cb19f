"""The README's block of what users call: every committed `clgemm bench --call` run, with its
device, date and command, gemm() per shape beside each library's own call, and the geo-means."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tabulate import tabulate

from ..callbench import FORMAT


def call_runs(results: Path) -> list[tuple[Path, dict]]:
    """The call-bench JSON files under `results/` (found by their format, in path order)."""
    out = []
    for path in sorted(results.rglob("bench-call-*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == FORMAT:
            out.append((path, data))
    return out


def _fmt(x: float | None, spec: str = ",.0f") -> str:
    return "" if x is None else format(x, spec)


def _geo(xs: list[float]) -> float | None:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def _run_block(path: Path, data: dict, here: Path, root: Path) -> list[str]:
    prov = data["provenance"]
    dev = data["device"]
    names = sorted({n for r in data["rows"] for n in r["references"]})
    link = path.relative_to(root).as_posix()
    rel = Path(*([".."] * len(here.parts)), link).as_posix() if here.parts else link
    lines = [f"#### {dev['name']} ({dev['backend']}, {prov['mode']} arrays): [{link}]({rel})", "",
             f"`{prov['command']}` ({prov['date'][:10]})", ""]
    rows, ratios = [], {n: [] for n in names}
    for r in data["rows"]:
        shape = "×".join(map(str, r["shape"]))
        if r["status"] != "ok":
            rows.append([shape, r["status"], "", "", r["note"]] + [""] * (2 * len(names)))
            continue
        cells = []
        for n in names:
            ref = r["references"].get(n, {})
            g = ref.get("gflops") if ref.get("status") == "ok" else None
            cells.append(_fmt(g) if g else ref.get("status", ""))
            if g:
                ratios[n].append(r["call_gflops"] / g)
        kernel = r["choice"].split(" (")[0]
        rows.append([shape, _fmt(r["call_gflops"]), _fmt(r["kernel_gflops"]),
                     _fmt(r["overhead_ms"], ".3f"), kernel] + cells
                    + [_fmt(r["call_gflops"] / float(c.replace(",", "")), ".2f")
                       if c and c[0].isdigit() else "" for c in cells])
    head = ["shape", "gemm() GFLOP/s", "its kernel GFLOP/s", "overhead ms", "kernel"]
    head += [f"{n} GFLOP/s" for n in names] + [f"gemm() / {n}" for n in names]
    lines.append(tabulate(rows, headers=head, tablefmt="github", disable_numparse=True))
    summary = [f"{n}: geo-mean {_geo(v):.2f}×, lowest {min(v):.2f}×" for n, v in ratios.items()
               if v]
    if summary:
        lines += ["", "gemm() against " + "; ".join(summary) + "."]
    return lines + [""]


def calls_block(root: Path, here: str = ".") -> str:
    runs = call_runs(root / "results")
    if not runs:
        return "No `clgemm bench --call` run is committed yet.\n"
    lines: list[str] = []
    for path, data in runs:
        lines += _run_block(path, data, Path(here) if here != "." else Path(), root)
    return "\n".join(lines)
