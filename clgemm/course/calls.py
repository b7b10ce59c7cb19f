"""What users call, for `docs/results.md` and the README: every committed `clgemm bench --call`
run, with its device, date and command, gemm() per shape beside each library's own call, and
the geo-means; and the README's one-table summary of the same runs."""

from __future__ import annotations

import math
from pathlib import Path

from tabulate import tabulate

from clgemm.backends.registry import label
from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file, read_json
from clgemm.measure.call_bench import FORMAT, gemm_over


def call_runs(results: Path) -> list[tuple[Path, dict]]:
    """The call-bench JSON files under `results/` (found by their format, in path order)."""
    out = []
    for path in sorted(results.rglob("bench-call-*.json")):
        if not is_regular_file(path):
            continue
        try:
            data = read_json(path, "call-bench file")
        except UsageError:
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
    rows: list[list[str]] = []
    ratios: dict[str, list[float]] = {n: [] for n in names}
    for r in data["rows"]:
        shape = "×".join(map(str, r["shape"]))
        if r["status"] != "ok":
            rows.append([shape, r["status"], "", "", r["note"]] + [""] * (2 * len(names)))
            continue
        cells, overs = [], []
        for n in names:
            ref = r["references"].get(n, {})
            g = ref.get("gflops") if ref.get("status") == "ok" else None
            cells.append(_fmt(g) if g else ref.get("status", ""))
            over = gemm_over(r, ref)
            overs.append(_fmt(over, ".2f") if over else "")
            if over:
                ratios[n].append(over)
        kernel = r["choice"].split(" (")[0]
        rows.append([shape, _fmt(r["call_gflops"]), _fmt(r["kernel_gflops"]),
                     _fmt(r["overhead_ms"], ".3f"), kernel] + cells + overs)
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


def _shape_text(shape: list[int]) -> str:
    m, n, k = shape
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def headline_block(root: Path, here: str = ".") -> str:
    """The README's one table: per committed call bench and library, what gemm() reaches
    against that library's own call over the run's shapes (geo-mean, lowest, highest), with
    gemm()'s fastest shape, so a reader sees at a glance where the library stands on each
    device; every shape is on the results page."""
    runs = call_runs(root / "results")
    if not runs:
        return "No `clgemm bench --call` run is committed yet.\n"
    base = Path(here) if here != "." else Path()
    rows, sources = [], []
    for path, data in runs:
        prov, dev = data["provenance"], data["device"]
        ok = [r for r in data["rows"] if r["status"] == "ok" and r.get("call_gflops")]
        if not ok:
            continue
        best = max(ok, key=lambda r: r["call_gflops"])
        names = sorted({n for r in ok for n in r["references"]})
        cores = f", {dev['compute_units']} cores" if dev.get("type") == "CPU" else ""
        where = (f"{dev['name']}{cores} ({label(dev['backend'])}, "
                 f"{'device' if prov['mode'] == 'device' else 'NumPy'} arrays)")
        first = True
        for name in names:
            pairs = [(over, r) for r in ok
                     if (over := gemm_over(r, r["references"].get(name, {}))) is not None]
            if not pairs:
                continue
            low, high = min(pairs, key=lambda p: p[0]), max(pairs, key=lambda p: p[0])
            rows.append([where if first else "",
                         f"{_fmt(best['call_gflops'])} at {_shape_text(best['shape'])}"
                         if first else "", name, f"{_geo([p for p, _ in pairs]):.2f}×",
                         f"{low[0]:.2f}× at {_shape_text(low[1]['shape'])}",
                         f"{high[0]:.2f}× at {_shape_text(high[1]['shape'])}", len(pairs)])
            first = False
        link = path.relative_to(root).as_posix()
        rel = Path(*([".."] * len(base.parts)), link).as_posix() if base.parts else link
        sources.append(f"[{link}]({rel}) ({prov['date'][:10]})")
    head = ["device", "gemm() at its fastest, GFLOP/s", "against", "gemm() / it, geo-mean",
            "lowest", "highest", "shapes"]
    table = tabulate(rows, headers=head, tablefmt="github", disable_numparse=True)
    return (table + "\n\nFrom `clgemm bench --call`: " + ", ".join(sources) + ".\n")
