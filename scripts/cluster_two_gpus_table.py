"""The table of a `cluster_two_gpus.sh` run, from the `summary:` lines its checks wrote.

    python scripts/cluster_two_gpus_table.py OUT [HEADER-LINE]

Prints Markdown: one row per run found in OUT (wall time, the part of it spent searching as
the run's journal `NAME.jsonl` beside its output says, search records, distinct
configurations, evaluations per minute while searching, best GFLOP/s, whether the journal
check passed), then the two-GPU runs' times as a share of the one-GPU runs' and whether the
exhaustive runs measured the same set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RUNS = [("budget-one-gpu", "search of a fixed budget, one GPU (no cluster)"),
        ("budget-one-worker", "the same, a local cluster of one worker"),
        ("budget-two-gpus", "the same, a local cluster of two workers, one per GPU"),
        ("exhaustive-one-gpu", "exhaustive search of a small space, one GPU (no cluster)"),
        ("exhaustive-two-gpus", "the same, two GPUs"),
        ("kill", "two GPUs, one worker killed, then the tune stopped"),
        ("kill-resume", "the same command with --resume")]


def summary(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    lines = [line for line in path.read_text().splitlines() if line.startswith("summary: ")]
    return json.loads(lines[-1][len("summary: "):]) if lines else None


def search_seconds(journal: Path) -> float | None:
    """The seconds the runs of a journal spent searching (their "spent" records): the run
    without its one-device parts (planning the space, starting, confirming the winners)."""
    if not journal.exists():
        return None
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:] if line.strip()]
    return sum(float(r["seconds"]) for r in records if r.get("kind") == "spent") or None


def main() -> int:
    out = Path(sys.argv[1])
    rows = ["| run | what | exit | wall s | of it searching, s | search records | "
            "configurations | evaluations/min while searching | best GFLOP/s | check |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    found: dict[str, dict[str, Any]] = {}
    for name, what in RUNS:
        s = summary(out / f"{name}.txt")
        if s is None:
            continue
        s["search_s"] = search_seconds(out / f"{name}.jsonl")
        found[name] = s
        searching = f"{s['search_s']:.1f}" if s["search_s"] else "-"
        per_min = (f"{s['records'] / s['search_s'] * 60:.0f}"
                   if s["search_s"] and name != "kill-resume" else "-")
        best = s.get("best") or {}
        gflops = f"{best['gflops']:.0f}" if best.get("gflops") else "-"
        rows.append(f"| {name} | {what} | {s['exit']} | {s['wall_s']:.1f} | {searching} | "
                    f"{s['records']} | {s['configurations']} | {per_min} | {gflops} | "
                    f"{'passed' if s['passed'] else 'FAILED'} |")
    print(*sys.argv[2:3], sep="\n")
    print("\n".join(rows))
    print()
    for base, two in (("budget-one-gpu", "budget-two-gpus"),
                      ("budget-one-worker", "budget-two-gpus"),
                      ("exhaustive-one-gpu", "exhaustive-two-gpus")):
        if base in found and two in found and found[base]["wall_s"]:
            a, b = found[base], found[two]
            line = f"- {two} against {base}: the whole command {b['wall_s'] / a['wall_s']:.2f}x"
            if a["search_s"] and b["search_s"]:
                rate = (b["records"] / b["search_s"]) / (a["records"] / a["search_s"])
                line += (f" the time; the search {b['search_s'] / a['search_s']:.2f}x the "
                         f"time, {rate:.2f}x the evaluations per minute")
            else:
                line += " the time"
            print(line)
    sets = out / "exhaustive-sets.txt"
    if sets.exists():
        said = [line for line in sets.read_text().splitlines() if not line.startswith("#")]
        print(f"- {said[-1]}")
    if "kill" in found and "kill-resume" in found:
        print(f"- kill, then --resume: {found['kill-resume']['records']} search records of "
              f"{found['kill-resume']['configurations']} configurations in the journal at the "
              f"end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
