"""What the time-bounded confirmation (`clgemm.tuner.rung_tune.confirm_plan`) would have done
in plain tunes already run: for every step of a tune's journals, the confirmation's
evaluations and their seconds (the workers' `eval_s`) as they ran, and as the rounds that fit
the step's allowance would have taken them, each later round costing what the first did. The
step's seconds come from the plan of the tune's log (its `seconds` column).
    python3 scripts/confirm_replay.py TUNE_LOG JOURNALS.tgz [TUNE_LOG JOURNALS.tgz ...]"""

import re
import sys

from journal_evals import config_key, confirms_by_step
from clgemm.tuner.rung_tune import TuneOptions, confirm_allowance, confirm_plan

PLAN_ROW = re.compile(r"^(\d+)\s+.*?\s(\d+x\d+x\d+)\s+([\d.]+)\s*$")


def plan_seconds(log: str) -> dict[str, float]:
    """'rungR-MxNxK' -> the step's seconds, from the plan the tune printed first."""
    out: dict[str, float] = {}
    for line in open(log, encoding="utf-8"):
        m = PLAN_ROW.match(line.rstrip())
        if m:
            out.setdefault(f"rung{m.group(1)}-{m.group(2)}", float(m.group(3)))
        if line.startswith("about "):
            break
    return out


def replay(log: str, tgz: str) -> None:
    seconds = plan_seconds(log)
    total_old = total_new = 0.0
    evals_old = evals_new = 0
    print(f"{log}:")
    print(f"{'step':28s} {'seconds':>7s} {'candidates':>10s} {'evaluations':>11s} "
          f"{'confirm s':>9s} {'rounds then':>11s} {'evaluations then':>16s} {'confirm s then':>14s}")
    for step, recs in confirms_by_step(tgz).items():
        if not recs or step not in seconds:
            continue
        candidates = len({config_key(r) for r in recs})
        first = sum(float(r.get("eval_s") or 0.0) for r in recs[:candidates])
        old = sum(float(r.get("eval_s") or 0.0) for r in recs)
        rounds, _ = confirm_plan(first, confirm_allowance(TuneOptions(time_s=seconds[step])),
                                 10, 2)
        rounds = min(rounds, -(-len(recs) // candidates))
        new = first * rounds
        total_old, total_new = total_old + old, total_new + new
        evals_old, evals_new = evals_old + len(recs), evals_new + candidates * rounds
        print(f"{step:28s} {seconds[step]:7g} {candidates:10d} {len(recs):11d} {old:9.1f} "
              f"{rounds:11d} {candidates * rounds:16d} {new:14.1f}")
    print(f"{'all steps':28s} {'':7s} {'':10s} {evals_old:11d} {total_old:9.1f} {'':11s} "
          f"{evals_new:16d} {total_new:14.1f}\n")


def main(args: list[str]) -> None:
    if len(args) < 2 or len(args) % 2:
        sys.exit(__doc__)
    for log, tgz in zip(args[::2], args[1::2]):
        replay(log, tgz)


if __name__ == "__main__":
    main(sys.argv[1:])
