"""Whether a tune's confirmation needs more than two rounds: for every step of the journals
given, the candidate with the fastest median over all its confirmation rounds, against the one
fastest over the first two rounds alone, and how much slower the latter is by all rounds'
medians. Steps with a failed confirmation, or fewer than two rounds, are left out. The first
two rounds here hold fewer launches than a confirmation of two rounds would take (its second
round takes the launches the others would have), so this errs towards differences.
    python3 scripts/confirm_two_rounds.py JOURNALS.tgz [JOURNALS.tgz ...]"""

import statistics
import sys

from journal_evals import config_key, confirms_by_step


def winner(records: list[dict]) -> tuple[str, dict[str, float]]:
    """The fastest candidate by the median of all its launches in `records`, and every
    candidate's median (ms)."""
    times: dict[str, list[float]] = {}
    for r in records:
        times.setdefault(config_key(r), []).extend(r["times_ms"])
    medians = {k: statistics.median(v) for k, v in times.items()}
    return min(medians, key=lambda k: medians[k]), medians


def compare(paths: list[str]) -> None:
    steps = agree = 0
    apart = []
    for path in paths:
        for step, confirm in confirms_by_step(path).items():
            count = len({config_key(r) for r in confirm})
            if not confirm or len(confirm) < 2 * count or any(
                    r.get("status") != "ok" for r in confirm):
                continue
            best, medians = winner(confirm)
            first_two, _ = winner(confirm[:2 * count])
            steps += 1
            if best == first_two:
                agree += 1
            else:
                apart.append((medians[first_two] / medians[best] - 1, path, step,
                              len(confirm) // count))
    print(f"{agree} of {steps} steps: the winner of the first two rounds is the winner of all")
    for slower, path, step, rounds in sorted(apart, reverse=True):
        print(f"  {path} {step} ({rounds} rounds): the first two rounds' winner "
              f"{100 * slower:.2f}% slower by all rounds' medians")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    compare(sys.argv[1:])
