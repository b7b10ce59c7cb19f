"""`clgemm report`: every generated block of `ladder/`, `results/README.md`, the README's
headline table and `docs/results.md`, and the plots.

One function decides which blocks each page has (`page_blocks`), so the report and its
`--check` can never disagree about what a page should hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from clgemm.core.errors import ClgemmError
from clgemm.core.paths import ROOT, TUNING_REL
from clgemm.course import library, page_name, plots
from clgemm.course.ablation import ablation_block
from clgemm.course.calls import calls_block, headline_block
from clgemm.course.data import Results, load_results
from clgemm.course.effects import effects_block
from clgemm.course.pages import refresh
from clgemm.course.replays import replay_block
from clgemm.course.tables import (bench_block, databases_block, devices_block, diff_block,
                                  journals_block, ladders_block, macros_block, measured_block,
                                  plots_block, rungs_block, runs_block, summary_block, tuned_block)
from clgemm.course.targets import targets_block
from clgemm.course.techniques import techniques_block
from clgemm.rungs import LIBRARY, REGISTRY, TILED, Rung


class StaleError(ClgemmError):
    """`clgemm report --check` found generated content that the committed data no longer
    gives (exit status 1: nothing the user typed was wrong)."""


def _rung_page(rung: Rung, results: Results, specs: list) -> dict[str, str]:
    """The blocks of one rung's page of the ladder."""
    images = [(s.path, s.caption) for s in specs if s.rung == rung.number]
    return {
        "summary": summary_block(rung),
        "diff": diff_block(rung),
        "macros": macros_block(rung),
        "measured": measured_block(rung, results),
        "tuned": tuned_block(rung, results),
        "plots": plots_block(images, none=(
            "No journal in `results/` gives a plot for this rung: the work-group shape map "
            "needs a journal of a register-blocked rung (6 and up), the tuning landscape an "
            "exhaustive one.")),
    }


def _beyond_page(results: Results, specs: list) -> dict[str, str]:
    """The blocks of the "beyond the ladder" page: the kernels' list, then each library
    kernel's own blocks, named after its slug."""
    beyond: dict[str, str] = {"kernels": library.kernels_block(),
                              "tiled-techniques": techniques_block(ROOT),
                              "tiled-ablation": ablation_block(ROOT)}
    for n in sorted(LIBRARY):
        rung = LIBRARY[n]
        images = [(s.path, s.caption) for s in specs if s.rung == n]
        beyond |= {f"{rung.slug}-summary": library.summary_block(rung),
                   f"{rung.slug}-diff": library.diff_block(rung),
                   f"{rung.slug}-macros": macros_block(rung),
                   f"{rung.slug}-measured": measured_block(rung, results),
                   f"{rung.slug}-tuned": tuned_block(rung, results),
                   f"{rung.slug}-plots": plots_block(images, none=(
                       "No journal in `results/` gives a plot for this kernel."))}
    return beyond


def _notes_blocks(results: Results) -> dict[str, str]:
    """The blocks of results/NOTES.md: the effects of the tiled kernels' parameters in their
    journals (12, 13: rungs 9 and 10 before the ladder's renumbering), and a replayed tune."""
    tiled = TILED.number
    return {
        f"{kind.lower()}-rung{n}-{'-'.join(names).lower()}": effects_block(results, n, names, kind)
        for kind, names in (("GPU", ("VWM", "VWN")), ("CPU", ("CACHE_A", "CACHE_B", "VWM")))
        for n in (tiled, tiled + 1)
    } | {f"cpu-rung{tiled}-panels": effects_block(results, tiled, ("PANELS", "CACHE_A",
                                                                    "CACHE_B"), "CPU"),
         f"cpu-rung{tiled}-lockstep": effects_block(results, tiled, ("LOCKSTEP", "PANELS",
                                                                     "CACHE_A", "CACHE_B"), "CPU"),
         "replay-plain-tune": replay_block(ROOT)}


def page_blocks(results: Results, specs: list) -> dict[str, dict[str, str]]:
    """Page (relative to the repository) -> block name -> its generated text."""
    charts = {s.target: s.path for s in specs if s.kind == "ladder"}
    benches = {s.target: s.path for s in specs if s.kind == "bench"}
    pages: dict[str, dict[str, str]] = {
        "ladder/README.md": {
            "rungs": rungs_block(),
            "devices": devices_block(results),
            "ladders": ladders_block(results, charts),
            "benches": plots_block([(s.path, s.caption) for s in specs if s.kind == "bench"],
                                   none="No bench run in `results/` yet."),
        },
    }
    for n in sorted(REGISTRY):
        pages[f"ladder/{page_name(REGISTRY[n])}"] = _rung_page(REGISTRY[n], results, specs)
    pages[library.PAGE] = _beyond_page(results, specs)
    pages["README.md"] = {"headline": headline_block(ROOT)}
    pages["docs/results.md"] = {
        "calls": calls_block(ROOT, here="docs"),
        "targets": targets_block(results, here="docs"),
        "bench": bench_block(results, benches, here="docs"),
    }
    pages["results/NOTES.md"] = _notes_blocks(results)
    gallery = [(s.path, s.caption) for s in specs]
    pages["results/README.md"] = {
        "runs": runs_block(results),
        "bench": bench_block(results, benches),
        "databases": databases_block(results),
        "journals": journals_block(results),
        "plots": plots_block(gallery, here="results", none="No plots yet."),
    }
    return pages


@dataclass
class Outcome:
    stale_blocks: list[str] = field(default_factory=list)   # 'page: block'
    stale_plots: list[str] = field(default_factory=list)    # 'results/plots/x.png'
    written: list[str] = field(default_factory=list)
    drawn: list[str] = field(default_factory=list)
    plots_skipped: bool = False


def report(root: Path, write: bool, draw: bool = True,
           say: Callable[[str], None] = lambda s: None) -> Outcome:
    """Regenerate (`write`) or only compare (not `write`) every generated part under `root`
    (a checkout: its `results/` and shipped tuning databases are read, its `ladder/` and
    `results/` pages refilled; kernels and rungs are the installed ones). Plots are drawn only
    when writing, `draw` is set and matplotlib is there; comparing never needs matplotlib."""
    root = Path(root)
    results = load_results(root / "results", root / TUNING_REL)
    specs = plots.plan(results)
    out = Outcome()
    for page, blocks in page_blocks(results, specs).items():
        changed = refresh(root / page, blocks, write, page)
        out.stale_blocks += [f"{page}: {name}" for name in changed]
        if write and changed:
            out.written.append(page)
            say(f"wrote {page} ({', '.join(changed)})")
    if write and draw:
        if plots.matplotlib_available():
            out.drawn = plots.draw_all(specs, results, root, say)
        else:
            out.plots_skipped = True
            say(plots.INSTALL_HINT)
    out.stale_plots = [s.path for s in plots.out_of_date(specs, root)]
    return out
