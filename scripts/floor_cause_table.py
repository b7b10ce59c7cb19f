"""The table of results/h100/floor-cause/floor.txt: per backend and way of starting a process,
each process's gemm() and pure-Python task in µs, in the order they ran.
Usage: python scripts/floor_cause_table.py FLOOR_TXT"""

import re
import sys
from collections import defaultdict

LINE = re.compile(r"(?P<way>.*?) (?P<be>opencl|cuda) \d+\^3: python task (?P<task>[\d.]+);"
                  r".*gemm\(\) (?P<call>[\d.]+) us")
rows: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
for line in open(sys.argv[1]):
    m = LINE.match(line)
    if m is None or m["way"] == "warm":
        continue
    way = re.sub(r"seed=[1-9]\d*", "seed=1..N", m["way"])
    rows[(m["be"], way)].append((float(m["call"]), float(m["task"])))
print("| backend | started | processes | gemm() µs, each | Python task µs, each |")
print("|---|---|---|---|---|")
for (be, way), got in sorted(rows.items()):
    calls = ", ".join(f"{c:.1f}" for c, _ in got)
    tasks = ", ".join(f"{t:.1f}" for _, t in got)
    print(f"| {be} | {way} | {len(got)} | {calls} | {tasks} |")
