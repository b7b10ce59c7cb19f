"""A markdown table of `scripts/cpu_call_timeline.py` outputs: per file and size, the host's time
before the first launch, the launches, the time after the last, the wall time, and the share
of the wall time the chosen kernel (the last launch) ran.
    python scripts/timeline_table.py FILE [FILE...]"""

import re
import sys


def rows(path: str):
    """(size, {part: ms}) per line of a timeline file."""
    for line in open(path):
        m = re.match(r"(\d+)\^3: (.*); max abs error", line)
        if m:
            parts = dict((k.strip(), float(v)) for k, v in
                         (re.match(r"(.*) ([0-9.]+)$", p.strip()).groups()  # type: ignore[union-attr]
                          for p in m.group(2).split(", ")))
            yield int(m.group(1)), parts


def main() -> None:
    print("| file | size | host before first launch | launches | after last launch | wall | "
          "kernel / wall |")
    print("|---|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        for size, parts in rows(path):
            launches = [(k.split(": ", 1)[1], v) for k, v in parts.items()
                        if re.match(r"\d+: (?!wait)", k)]
            text = ", ".join(f"{name} {ms:.2f}" for name, ms in launches)
            print(f"| {path.rsplit('/', 1)[-1]} | {size}^3 | {parts['host before first launch']:.3f} "
                  f"| {text} | {parts['after last launch']:.3f} | {parts['wall']:.2f} "
                  f"| {launches[-1][1] / parts['wall']:.2f} |")


if __name__ == "__main__":
    main()
