"""A markdown table of `scripts/read_b_pipeline_sweep.py` outputs: per file and size, the
kernel behind the transpose (alone and with the transpose), each form reading B as it lies,
and each against cuBLAS.
    python3 scripts/read_b_table.py FILE [FILE...]"""

import re
import sys

HEAD = re.compile(r"^(\d+)\^3 \((.*)\) in \d+ rounds of turns: .* median ([\d,]+) GFLOP/s")
ROW = re.compile(r"^  (.+?)\s+kernel\s+([\d.]+) us\s+with what it needs before it\s+([\d.]+) us"
                 r"\s+[\d,]+ GFLOP/s\s+([\d.]+)x vendor")


def main(paths: list[str]) -> None:
    print("| file | size | form | kernel µs | with the transpose µs | x cuBLAS |")
    print("|---|---|---|---|---|---|")
    for path in paths:
        size = None
        for line in open(path, errors="replace"):
            head = HEAD.match(line)
            if head:
                size = head.group(1)
                continue
            row = ROW.match(line)
            if row and size:
                form, kernel, whole, ratio = row.groups()
                print(f"| {path.split('/')[-2]}/{path.split('/')[-1]} | {size}³ | {form} | "
                      f"{kernel} | {whole} | {ratio} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
