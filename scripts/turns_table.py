"""`clgemm bench --call` runs made in turns on one loan (files named PREFIX-TURN-old.json and
PREFIX-TURN-new.json, or PREFIX-BACKEND-TURN-old/new.json) as one table: per backend and shape,
the median microseconds per call of the old side and the new, new over old as a speed, each
reference library's median, gemm()'s choice on the new side, and every turn's figure; then per
backend the geo-mean and lowest of new over old.
Usage: python scripts/turns_table.py FILE.json [FILE.json ...]"""

import json
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"-(?:(cuda|opencl)-)?(\d+)-(old|new)[^/]*\.json$")


def main(paths: list[str]) -> None:
    runs: dict = defaultdict(lambda: defaultdict(list))
    refs: dict = defaultdict(lambda: defaultdict(list))
    chosen: dict = {}
    for path in sorted(paths):
        match = NAME.search(path)
        if not match:
            sys.exit(f"{path}: not named PREFIX[-BACKEND]-TURN-old|new.json")
        data = json.load(open(path))
        backend = match.group(1) or data["provenance"]["backend"]
        side = match.group(3)
        for row in data["rows"]:
            if row["status"] != "ok":
                continue
            key = (backend, "x".join(map(str, row["shape"])))
            runs[key][side].append(row["call_ms"] * 1e3)
            for name, ref in row["references"].items():
                if ref.get("status") == "ok" and ref.get("ms"):
                    refs[key][name].append(ref["ms"] * 1e3)
            if side == "new":
                chosen[key] = row["choice"].split(" (")[0]
    print("| backend | shape | old µs | new µs | new / old, speed | references, µs | chosen (new) "
          "| old, each turn | new, each turn |")
    print("|---|---|---|---|---|---|---|---|---|")
    speeds: dict = defaultdict(list)
    for key in sorted(runs, key=lambda k: (k[0], [int(x) for x in k[1].split("x")])):
        old, new = runs[key]["old"], runs[key]["new"]
        if not old or not new:
            continue
        o, n = statistics.median(old), statistics.median(new)
        speeds[key[0]].append(o / n)
        ref = ", ".join(f"{name} {statistics.median(v):.1f}" for name, v in refs[key].items())
        print(f"| {key[0]} | {key[1]} | {o:.1f} | {n:.1f} | {o / n:.2f} | {ref} | "
              f"{chosen.get(key, '')} | {' '.join(f'{x:.1f}' for x in old)} | "
              f"{' '.join(f'{x:.1f}' for x in new)} |")
    print()
    for backend, ratios in sorted(speeds.items()):
        print(f"{backend}: new / old, geo-mean {statistics.geometric_mean(ratios):.2f}, lowest "
              f"{min(ratios):.2f}, {sum(r > 1 for r in ratios)} of {len(ratios)} faster")


if __name__ == "__main__":
    main(sys.argv[1:])
