"""The best measured speed of each combination of some parameters in tune journals: for each
journal, the combinations of NAMES (comma list) by their best GFLOP/s, with how many
configurations of each were measured and the best one's microseconds.
    python3 scripts/journal_groups.py NAMES JOURNAL.jsonl [JOURNAL.jsonl ...]"""

import json
import sys
from collections import defaultdict


def main(names: list[str], paths: list[str]) -> None:
    for path in paths:
        with open(path) as f:
            head, *rows = [json.loads(line) for line in f if line.strip()]
        best: dict = defaultdict(lambda: (0.0, 0.0))
        count: dict = defaultdict(int)
        for r in rows:
            if r.get("status") != "ok" or not r.get("gflops"):
                continue
            key = tuple(r["config"].get(n) for n in names)
            count[key] += 1
            if r["gflops"] > best[key][0]:
                best[key] = (r["gflops"], r["ms"] * 1000)
        print(f"{path}: {head.get('device_name')} ({head.get('backend')}), "
              f"{'x'.join(map(str, head.get('size', [])))}, {sum(count.values())} measured")
        print(f"| {' | '.join(names)} | measured | best GFLOP/s | its µs |")
        print("|" + "---|" * (len(names) + 3))
        for key, (gflops, us) in sorted(best.items(), key=lambda kv: -kv[1][0]):
            print(f"| {' | '.join(map(str, key))} | {count[key]} | {gflops:,.0f} | {us:.1f} |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1].split(","), sys.argv[2:])
