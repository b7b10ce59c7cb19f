"""Plots of the committed results, drawn with matplotlib (an optional extra: `clgemm[plots]`).

What is drawn is decided from the results alone (`plan`), without matplotlib, so that pages can
link the plots and `clgemm report --check` can tell a missing or out-of-date plot on a machine
that cannot draw. Out of date is decided by a digest of the files a plot is drawn from, kept in
`results/plots/sources.json`: PNG bytes differ between matplotlib versions and fonts, so
comparing images would report noise, while the digest changes exactly when the data does.

- ladder: GFLOP/s per rung for each run of one device and size, reference libraries as lines
- bench: the best tuned rung and each reference library over the bench's shapes
- landscape: every configuration of an exhaustive journal, and the best-so-far of each search
  strategy replayed on it (`clgemm.tuner.replay`)
- wg-shapes: best GFLOP/s per work-group shape (RTSM rows x RTSN columns of work-items) in a
  journal of a register-blocked rung
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file, read_bytes, read_json
from clgemm.core.paths import KERNELS, ROOT
from clgemm.course.data import Results, Run
from clgemm.course.tables import ladder_groups, size_text
from clgemm.course.tiling import EXAMPLES, tiling
from clgemm.rungs import ALL_RUNGS, REGISTRY
from clgemm.tuner.replay import load_replay, trace
from clgemm.tuner.strategies import strategy_names

#: bump when the drawing changes, so that every plot counts as out of date once
DRAWING_VERSION = 3
#: an exhaustive journal needs this many configurations before strategies can differ on it
LANDSCAPE_MIN = 50
#: seeds per strategy in the best-so-far curves (the median is drawn)
SEEDS = 20
INSTALL_HINT = ("plots not drawn: matplotlib is missing; install it with "
                "pip install 'clgemm[plots]' (in this project: .venv/bin/pip install matplotlib)")
MANIFEST = "sources.json"
#: the module whose index arithmetic the tiling pictures draw
TILING_SOURCE = "clgemm/course/tiling.py"


@dataclass(frozen=True)
class PlotSpec:
    kind: str
    name: str                          # file name under results/plots/
    caption: str
    sources: tuple[str, ...]           # files it is drawn from, relative to the repository
    target: str                        # what it shows: '<key> <size>', a bench or journal path
    rung: int | None = None

    @property
    def path(self) -> str:
        return f"results/plots/{self.name}"

    @property
    def number(self) -> int:
        """The rung of a plot drawn for one (tiling, landscape, wg-shapes): `plan` gives them
        one, and a spec made elsewhere without it is refused here rather than drawn blank."""
        if self.rung is None:
            raise UsageError(f"plot {self.name}: a {self.kind} plot needs a rung")
        return self.rung


def _blocked_rung(number: int) -> bool:
    """Rungs with a 2D register block: their work-group is RTSM x RTSN work-items."""
    rung = ALL_RUNGS.get(number)
    if rung is None:
        return False
    try:
        derived = rung.derive(rung.defaults())
    except Exception:
        return False
    return "RTSM" in derived and "RTSN" in derived


def _stem(path: str) -> str:
    return Path(path).stem


def plan(results: Results) -> list[PlotSpec]:
    """Every plot the results call for, in a fixed order: each rung's tiling picture first
    (drawn from the kernels, not from results), then what the results show."""
    specs = []
    for n in sorted(EXAMPLES):
        rung = REGISTRY[n]
        kernel = (KERNELS / rung.file).relative_to(ROOT).as_posix()
        specs.append(PlotSpec(
            "tiling", f"tiling-rung{n}.png",
            f"rung {n}: who computes and who loads what in one work-group (example "
            f"configuration {rung.params_text(tiling(n).params)})",
            (kernel, TILING_SOURCE), f"rung {n}", n))
    for runs in ladder_groups(results):
        d, size = runs[0].device, runs[0].size
        m, n, k = size
        specs.append(PlotSpec(
            "ladder", f"ladder-{d.key}-{m}x{n}x{k}.png",
            f"GFLOP/s per rung on {d.label} at {size_text(size)}",
            tuple(dict.fromkeys(r.path for r in runs)), f"{d.key} {size_text(size)}"))
    for b in results.benches:
        slug = b.path.removeprefix("results/").removesuffix(".json").replace("/", "-")
        specs.append(PlotSpec("bench", f"bench-{slug}.png",
                              f"best tuned rung and reference libraries per shape on "
                              f"{b.device.label}", (b.path,), b.path))
    for j in results.journals:
        for n in j.rungs():
            records = j.records_of(n)
            if j.strategy(n) == "exhaustive" and len(records) >= LANDSCAPE_MIN:
                specs.append(PlotSpec(
                    "landscape", f"landscape-{j.device.key}-{_stem(j.path)}.png",
                    f"rung {n} tuning landscape on {j.device.label} at {size_text(j.size)} "
                    f"({len(records)} configurations, exhaustive)", (j.path,), j.path, n))
            if _blocked_rung(n) and len(_shape_scores(j.records_of(n), n)) > 1:
                specs.append(PlotSpec(
                    "wg-shapes", f"wg-shapes-{j.device.key}-{_stem(j.path)}.png",
                    f"rung {n}: best GFLOP/s per work-group shape on {j.device.label} at "
                    f"{size_text(j.size)}", (j.path,), j.path, n))
    return specs


def digest(spec: PlotSpec, root: Path) -> str:
    """What a plot's contents depend on: its kind, the drawing code's version, its sources."""
    h = hashlib.sha256(f"{DRAWING_VERSION} {spec.kind} {spec.name}\n".encode())
    for source in spec.sources:
        h.update(source.encode() + b"\n")
        h.update(read_bytes(root / source, "plot source"))
    return h.hexdigest()[:16]


def read_manifest(folder: Path) -> dict[str, str]:
    """The digests the plots were drawn from; a manifest that cannot be read (not a regular
    file, not JSON) only means every plot is redrawn."""
    path = folder / MANIFEST
    if not is_regular_file(path):
        return {}
    try:
        return dict(read_json(path, "plot manifest").get("plots", {}))
    except (UsageError, ValueError, TypeError, AttributeError):
        return {}


def write_manifest(folder: Path, plots: dict[str, str]) -> None:
    text = json.dumps({"about": "digest of the files each plot is drawn from "
                                "(written by clgemm report)",
                       "plots": dict(sorted(plots.items()))}, indent=1) + "\n"
    (folder / MANIFEST).write_text(text)


def out_of_date(specs: list[PlotSpec], root: Path) -> list[PlotSpec]:
    """Plots that are missing or were drawn from other data than what is committed now."""
    folder = root / "results" / "plots"
    manifest = read_manifest(folder)
    return [s for s in specs if not (folder / s.name).exists()
            or manifest.get(s.name) != digest(s, root)]


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def draw_all(specs: list[PlotSpec], results: Results, root: Path,
             say: Callable[[str], None] = lambda s: None) -> list[str]:
    """Draw the plots that are out of date, forget those no longer planned (deleting their
    files, but only files this function wrote), and update the manifest. Returns the names
    drawn."""
    folder = root / "results" / "plots"
    folder.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(folder)
    planned = {s.name for s in specs}
    for name in sorted(set(manifest) - planned):
        (folder / name).unlink(missing_ok=True)
        del manifest[name]
        say(f"removed results/plots/{name} (its data is gone)")
    drawn = []
    for spec in out_of_date(specs, root):
        DRAW[spec.kind](spec, results, folder / spec.name)
        manifest[spec.name] = digest(spec, root)
        drawn.append(spec.name)
        say(f"drew {spec.path}")
    write_manifest(folder, manifest)
    return drawn


# -- drawing ----------------------------------------------------------------------------------
def _figure(width: float, height: float):
    """A figure on the Agg canvas: no display needed, and no global pyplot state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: Path) -> None:
    fig.savefig(path, format="png", metadata={"Software": None})


def _thousands(ax) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 10
                                               else f"{v:g}"))


def draw_ladder(spec: PlotSpec, results: Results, path: Path) -> None:
    runs: list[Run] = [r for r in results.runs if r.path in spec.sources
                       and f"{r.device.key} {size_text(r.size)}" == spec.target]
    numbers = sorted({row.rung for run in runs for row in run.rows})
    fig = _figure(10, 6)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(runs))
    for i, run in enumerate(runs):
        xs = [x + (i - (len(runs) - 1) / 2) * width for x in range(len(numbers))]
        ys = [(row.gflops or 0) if (row := run.row(n)) else 0 for n in numbers]
        how = ", measured in alternating rounds" if run.kind == "vs-defaults" else ""
        ax.bar(xs, ys, width=width, label=f"rungs, {run.config} parameters{how}")
    # Reference lines from the last run in order (tuned after default): the ladder a student
    # compares with the libraries is the tuned one.
    with_refs = [r for r in runs if r.references]
    styles = ["--", ":", "-.", (0, (5, 1, 1, 1))]
    if with_refs:
        run = with_refs[-1]
        for j, ref in enumerate(x for x in run.references if x.gflops):
            ax.axhline(ref.gflops, color="0.25", linestyle=styles[j % len(styles)], linewidth=1.2,
                       label=f"{ref.name}: {ref.gflops:,.0f} GFLOP/s ({run.config} run)")
    # One slot per kernel measured, named: numbers alone would mean nothing to a reader, and
    # the library's kernels (11 and up) would stand apart from the ladder by a gap of nothing.
    ax.set_xticks(range(len(numbers)), [f"{n} {ALL_RUNGS[n].slug}" if n in ALL_RUNGS else str(n)
                                        for n in numbers], fontsize=8, rotation=30, ha="right")
    ax.set_xlabel("rung (after 10: the library's kernels beside the ladder)")
    ax.set_ylabel("GFLOP/s (higher is better)")
    _thousands(ax)
    d = runs[0].device
    ax.set_title(f"Kernel ladder on {d.label}, M=N=K={runs[0].size[0]}"
                 if len(set(runs[0].size)) == 1 else
                 f"Kernel ladder on {d.label}, M×N×K={size_text(runs[0].size)}")
    if not with_refs:
        ax.text(0.99, 0.98, "no reference library in these files", transform=ax.transAxes,
                ha="right", va="top", fontsize=8, color="0.4")
    # Below the axes, never over a bar: the tallest bars are where a legend inside would go.
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)


def draw_bench(spec: PlotSpec, results: Results, path: Path) -> None:
    bench = next(b for b in results.benches if b.path == spec.target)
    rows = list(bench.rows)
    xs = list(range(len(rows)))
    fig = _figure(10, 5)
    ax = fig.add_subplot()
    best = [(row.get("best") or {}) for row in rows]
    ys = [b.get("gflops") if b.get("status", "ok") == "ok" and b.get("gflops") else math.nan
          for b in best]
    # Markers only: the shapes are separate problems, and a line between them would suggest a
    # trend along an axis that has none.
    ax.plot(xs, ys, marker="o", linestyle="none", markersize=8,
            label="best tuned rung (number above each point)")
    for x, y, b in zip(xs, ys, best):
        if y == y:
            ax.annotate(str(b.get("rung", "")), (x, y), textcoords="offset points",
                        xytext=(0, 6), ha="center", fontsize=8)
    names = []
    for row in rows:
        for ref in row.get("references") or []:
            if ref["name"] not in names:
                names.append(ref["name"])
    for name in names:
        ys = []
        for row in rows:
            ref = next((r for r in row.get("references") or [] if r["name"] == name), None)
            ok = ref is not None and ref.get("status", "ok") == "ok" and ref.get("gflops")
            ys.append(ref["gflops"] if ref is not None and ok else math.nan)
        ax.plot(xs, ys, marker="s", linestyle="none", label=name)
    ax.set_xticks(xs, [size_text(row["shape"]) for row in rows], rotation=45, ha="right")
    ax.set_xlabel("shape M×N×K (in the order the bench ran them)")
    ax.set_ylabel("GFLOP/s (higher is better)")
    _thousands(ax)
    ax.set_title(f"clgemm bench on {bench.device.label}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    _save(fig, path)


def _best_so_far_curves(journal_path: Path, rung: int):
    """Per strategy: the median over seeds of best-so-far / best after each evaluation."""
    rs = next(x for x in load_replay(journal_path) if x.rung == rung)
    budget = len(rs.space)
    curves = {}
    for name in strategy_names():
        runs = []
        for seed in range(SEEDS):
            best, curve = 0.0, []
            for t in trace(name, rs, budget, seed):
                best = max(best, t.score or 0.0)
                curve.append(best / rs.best if rs.best else 0.0)
            curve += [curve[-1] if curve else 0.0] * (budget - len(curve))
            runs.append(curve)
        curves[name] = [statistics.median(r[i] for r in runs) for i in range(budget)]
    return curves, rs


def draw_landscape(spec: PlotSpec, results: Results, path: Path) -> None:
    journal = next(j for j in results.journals if j.path == spec.target)
    number = spec.number
    rung = ALL_RUNGS.get(number)
    records = journal.records_of(number)
    ok = sorted((r["gflops"] for r in records if r.get("status") == "ok" and r.get("gflops")),
                reverse=True)
    failed = len(records) - len(ok)
    fig = _figure(12, 4.6)
    left, right = fig.subplots(1, 2)
    left.plot(range(1, len(ok) + 1), ok, marker=".", linestyle="none", markersize=3)
    default = rung.defaults() if rung else None
    dflt = next((r for r in records if default and r.get("config") == default
                 and r.get("status") == "ok"), None)
    if dflt is not None:
        rank = ok.index(dflt["gflops"]) + 1
        left.plot([rank], [dflt["gflops"]], marker="o", color="red", linestyle="none",
                  label=f"the defaults (rank {rank} of {len(ok)})")
        left.legend(fontsize=8)
    left.set_xlabel("configurations, fastest first")
    left.set_ylabel("GFLOP/s")
    left.set_title(f"{len(ok)} configurations ran correctly"
                   + (f", {failed} failed" if failed else ""), fontsize=10)
    left.grid(alpha=0.3)
    curves, rs = _best_so_far_curves(results.file(journal.path), number)
    for name, curve in curves.items():
        right.plot(range(1, len(curve) + 1), [100 * c for c in curve], label=name)
    right.set_xscale("log")
    right.set_xlabel("evaluations (log scale)")
    right.set_ylabel("best so far, % of the best configuration")
    right.set_title(f"search strategies replayed on this journal (median of {SEEDS} seeds)",
                    fontsize=10)
    right.legend(fontsize=8)
    right.grid(alpha=0.3)
    fig.suptitle(f"Rung {number} on {journal.device.label}, {size_text(journal.size)}: "
                 f"best {rs.best:,.2f} GFLOP/s")
    _save(fig, path)


def _shape_scores(records: list[dict], number: int) -> dict[tuple[int, int], float]:
    """Best GFLOP/s per work-group shape (rows, columns of work-items) among correct results."""
    rung = ALL_RUNGS.get(number)
    best: dict[tuple[int, int], float] = {}
    if rung is None:
        return best
    for r in records:
        if r.get("status") != "ok" or not r.get("gflops"):
            continue
        try:  # a journal older than a parameter has its default
            derived = rung.derive({**rung.defaults(), **r["config"]})
            shape = (int(derived["RTSM"]), int(derived["RTSN"]))
        except (KeyError, TypeError, ZeroDivisionError):
            continue
        best[shape] = max(best.get(shape, 0.0), float(r["gflops"]))
    return best


def draw_wg_shapes(spec: PlotSpec, results: Results, path: Path) -> None:
    journal = next(j for j in results.journals if j.path == spec.target)
    number = spec.number
    scores = _shape_scores(journal.records_of(number), number)
    rows = sorted({s[0] for s in scores})
    cols = sorted({s[1] for s in scores})
    grid = np.full((len(rows), len(cols)), np.nan)
    for (r, c), g in scores.items():
        grid[rows.index(r), cols.index(c)] = g
    # Wide enough for the two-line title and the axis labels however few columns there are.
    fig = _figure(max(6.5, 2.7 + 1.1 * len(cols)), max(3.8, 2.2 + 0.75 * len(rows)))
    ax = fig.add_subplot()
    image = ax.imshow(grid, cmap="viridis", origin="lower", aspect="auto")
    top = np.nanmax(grid)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if grid[i, j] == grid[i, j]:
                # viridis runs from dark to light along the colour scale itself (vmin..vmax),
                # so the text colour follows the cell's place on that scale
                light = float(image.norm(grid[i, j])) > 0.55
                ax.text(j, i, f"{grid[i, j]:,.0f}" if top >= 100 else f"{grid[i, j]:.1f}",
                        ha="center", va="center", fontsize=8,
                        color="black" if light else "white")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols])
    ax.set_yticks(range(len(rows)), [str(r) for r in rows])
    ax.set_xlabel("RTSN = TSN / WPTN (work-items along N)")
    ax.set_ylabel("RTSM = TSM / WPTM (work-items along M)")
    ax.set_title(f"Rung {number}, {journal.device.label}, {size_text(journal.size)}:\n"
                 f"best GFLOP/s per work-group shape ({len(journal.records_of(number))} "
                 f"configurations, {journal.strategy(number)}; blank: not tried)", fontsize=9)
    bar = fig.colorbar(image, ax=ax, label="GFLOP/s")
    _thousands(bar.ax)
    _save(fig, path)


def _tiles(ax, owners, title: str, colours, edge_rows: int | None = None,
           edge_cols: int | None = None, xlabel: str = "", ylabel: str = "") -> None:
    """One tile as a grid of cells, each coloured and numbered by its work-item; cells past
    the edge (rung 10) hatched."""
    from matplotlib.patches import Rectangle

    rows, cols = owners.shape
    for i in range(rows):
        for j in range(cols):
            tid = int(owners[i, j])
            outside = ((edge_rows is not None and i >= edge_rows)
                       or (edge_cols is not None and j >= edge_cols))
            face = colours(tid % 20) if tid >= 0 else (1, 1, 1, 1)
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=face, edgecolor="0.3", linewidth=0.6,
                                   hatch="///" if outside else None, alpha=0.45 if outside else 1))
            if tid >= 0:
                ax.text(j + 0.5, i + 0.5, str(tid), ha="center", va="center", fontsize=7)
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)


def draw_tiling(spec: PlotSpec, results: Results, path: Path) -> None:
    """A, B and C tiles of one work-group, every element coloured by the work-item that loads
    (A, B) or computes (C) it."""
    from matplotlib import colormaps

    number = spec.number
    t = tiling(number)
    colours = colormaps["tab20"]
    edge = t.edge
    fig = _figure(11, 4.4)
    ax_a, ax_b, ax_c = fig.subplots(1, 3, width_ratios=[t.a.shape[1], t.b.shape[1],
                                                        t.c.shape[1]])
    local = "read from global memory by work-item 0" if number == 1 else (
        "in local memory, x2 buffers" if number in (9, 10) else "in local memory")
    _tiles(ax_a, t.a, f"A tile ({local})", colours, edge and edge[0], edge and edge[2],
           "k", "m")
    _tiles(ax_b, t.b, f"B tile ({local})", colours, edge and edge[2], edge and edge[1],
           "n", "k")
    _tiles(ax_c, t.c, "C tile: who computes each element", colours, edge and edge[0],
           edge and edge[1], "n", "m")
    rung = REGISTRY[number]
    fig.suptitle(f"Rung {number}, {rung.title}: {t.work_items} work-items "
                 f"({rung.params_text(t.params)})\n{t.note}", fontsize=10)
    _save(fig, path)


DRAW = {"tiling": draw_tiling, "ladder": draw_ladder, "bench": draw_bench, "landscape": draw_landscape,
        "wg-shapes": draw_wg_shapes}
