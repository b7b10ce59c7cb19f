"""How long the measuring worker took over each configuration of a tune: for every step of a
tune's journals, the evaluations, the median and largest `eval_s` (the worker's seconds
from receiving a configuration to answering: build from the cache, launches, the result's
check) and the seconds from the step before's last record to its first (records carry whole
seconds), steps in the order they ran, and the times of the first and the last record.
    python3 scripts/journal_evals.py JOURNALS.tgz [JOURNALS.tgz ...]"""

import datetime
import json
import statistics
import sys
import tarfile
import tempfile
from pathlib import Path

from clgemm.tuner.journal import read_journal


def records_by_step(tgz: str) -> dict[str, list[dict]]:
    """'rungR-MxNxK' -> the records of that step's journal, as the tuner reads journals; the
    steps in the order they ran (by their first record's time)."""
    with tempfile.TemporaryDirectory() as folder, tarfile.open(tgz) as tar:
        tar.extractall(folder, filter="data")
        steps = {path.stem: read_journal(path)[1] for path in Path(folder).rglob("*.jsonl")}
    return dict(sorted(steps.items(), key=lambda kv: kv[1][0]["time"] if kv[1] else ""))


def confirms_by_step(tgz: str) -> dict[str, list[dict]]:
    """'rungR-MxNxK' -> the confirmation's records of that step, in `records_by_step`'s order."""
    return {step: [r for r in recs if r.get("kind") == "confirm"]
            for step, recs in records_by_step(tgz).items()}


def config_key(record: dict) -> str:
    """A record's configuration as one comparable value."""
    return json.dumps(record["config"], sort_keys=True)


def _when(record: dict) -> datetime.datetime:
    return datetime.datetime.fromisoformat(record["time"].replace("Z", "+00:00"))


def show(tgz: str) -> None:
    print(f"{tgz}:")
    print(f"{'step':28s} {'evaluations':>11s} {'median eval_s':>13s} {'largest':>8s} "
          f"{'gap s':>6s}")
    steps = records_by_step(tgz).items()
    last = None
    for step, recs in steps:
        secs = [float(r["eval_s"]) for r in recs if r.get("eval_s") is not None]
        times = sorted(_when(r) for r in recs if r.get("time"))
        gap = f"{(times[0] - last).total_seconds():6.0f}" if times and last else f"{'':6s}"
        last = times[-1] if times else last
        if secs:
            print(f"{step:28s} {len(secs):11d} {statistics.median(secs):13.2f} {max(secs):8.2f} "
                  f"{gap}")
    times = sorted(r["time"] for _, recs in steps for r in recs if r.get("time"))
    if times:
        print(f"records from {times[0]} to {times[-1]}")
    print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        show(arg)
