"""results/NOTES.md's table of how the plain tune's search does where the project knows the best:
the default strategy replayed, with the budget the plain tune spent on the same rung of the same
device, against every long journal (one that measured at least LONG configurations)."""

from __future__ import annotations

import statistics
from pathlib import Path

from tabulate import tabulate

from clgemm.core.files import is_regular_file
from clgemm.tuner.journal import read_journal
from clgemm.tuner.replay import load_replay, run_once
from clgemm.tuner.rung_tune import AUTO_PARTIAL

#: a journal with at least this many correct measurements is long enough to replay against
LONG = 250
SEEDS = 20


def _plain_budget(folder: Path, rung: int) -> tuple[int, str] | None:
    """Search evaluations the plain tune made for `rung` on this device (its journal), and where."""
    for path in sorted(folder.glob(f"rung{rung}-*-plain-tune.jsonl")):
        if not is_regular_file(path):
            continue
        _, records, _ = read_journal(path)
        n = sum(1 for r in records if r.get("kind", "search") == "search")
        if n:
            return n, path.name
    return None


def replay_block(root: Path) -> str:
    rows = []
    for path in sorted((root / "results" / "journals").rglob("*.jsonl")):
        if path.name.endswith("-plain-tune.jsonl"):
            continue
        try:
            sets = load_replay(path)
        except Exception:  # a journal that cannot be replayed is not a long one
            continue
        for rs in sets:
            if sum(1 for s in rs.scores.values() if s) < LONG or rs.best <= 0:
                continue
            plain = _plain_budget(path.parent, rs.rung)
            if plain is None:
                continue
            budget, source = plain
            reached = [run_once(AUTO_PARTIAL, rs, budget, seed) / rs.best for seed in range(SEEDS)]
            rows.append([f"{path.parent.name}/{path.name}", rs.rung, len(rs.space), rs.strategy,
                         f"{budget} ({source})", f"{100 * statistics.median(reached):.1f}%",
                         f"{100 * min(reached):.1f}%"])
    if not rows:
        return "No journal is long enough to replay against yet.\n"
    head = ["journal", "rung", "configurations", "made by", "budget (plain tune's journal)",
            f"median of {SEEDS} seeds", "worst seed"]
    return (tabulate(rows, headers=head, tablefmt="github", disable_numparse=True)
            + f"\n\nShare of the journal's best that {AUTO_PARTIAL} (the plain tune's strategy) "
              f"reaches within the plain tune's budget, started from nothing (a live run also "
              f"starts from the lookup chain's best configurations).\n")
