"""A Markdown table of `floor_parts.py` processes run in turns (the floor-turns.txt that
results/h100/hot-trim/run.sh writes): per backend and side, each process's gemm() against its
own bare launch (the launch with its event through OpenCL), as a ratio and as the microseconds
beyond it, lowest to highest; a process's floor moves both the launch and the Python around it.
Usage: python scripts/floor_turns_table.py FLOOR-TURNS.TXT"""

import re
import statistics
import sys

LINE = re.compile(r"(old|new) (\w+) \d+\^3: python task ([\d.]+); launch, no event ([\d.]+);"
                  r"(?: launch, pyopencl event ([\d.]+);)? gemm\(\) ([\d.]+)")


def main(path: str) -> None:
    rows = [m.groups() for m in map(LINE.match, open(path)) if m]
    print("| backend | side | processes | gemm() / bare launch | µs beyond the launch | median µs "
          "beyond |")
    print("|---|---|---|---|---|---|")
    for backend in sorted({r[1] for r in rows}):
        for side in ("old", "new"):
            mine = [r for r in rows if r[0] == side and r[1] == backend]
            if not mine:
                continue
            launch = [float(r[4] or r[3]) for r in mine]
            call = [float(r[5]) for r in mine]
            ratios = sorted(c / lo for c, lo in zip(call, launch))
            beyond = sorted(c - lo for c, lo in zip(call, launch))
            print(f"| {backend} | {side} | {len(mine)} | "
                  f"{', '.join(f'{x:.2f}' for x in ratios)} | "
                  f"{', '.join(f'{x:.1f}' for x in beyond)} | {statistics.median(beyond):.1f} |")


if __name__ == "__main__":
    main(sys.argv[1])
