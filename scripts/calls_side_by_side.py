"""gemm()'s call in several `clgemm bench --call --json` files of the CUDA path, side by side,
each against the cuBLAS call measured in its own file: one row per shape found in the first
file, µs per call and cuBLAS's time over gemm()'s (above 1: gemm() is faster), then each
file's geo-mean of that ratio and how many shapes reach 0.8. Prints Markdown.

    python3 scripts/calls_side_by_side.py LABEL=FILE [LABEL=FILE ...]
"""

from __future__ import annotations

import sys

from against_cublas import ok_rows, summary


def main(pairs: list[str]) -> None:
    labelled = [p.split("=", 1) for p in pairs]
    runs = [(label, ok_rows(path)) for label, path in labelled]
    print("| shape | " + " | ".join(f"{label} µs | cuBLAS / {label}" for label, _ in runs) + " |")
    print("|---|" + "---|---|" * len(runs))
    ratios: dict[str, list[float]] = {label: [] for label, _ in runs}
    for shape in runs[0][1]:
        cells = []
        for label, rows in runs:
            row = rows.get(shape)
            ref = (row or {}).get("references", {}).get("cuBLAS", {})
            if row is None or ref.get("status") != "ok":
                cells += ["–", "–"]
                continue
            ratios[label].append(ref["ms"] / row["call_ms"])
            cells += [f"{row['call_ms'] * 1e3:,.1f}", f"{ratios[label][-1]:.2f}"]
        print(f"| {'x'.join(map(str, shape))} | " + " | ".join(cells) + " |")
    print()
    for label, values in ratios.items():
        if values:
            print(f"- {label}: {summary(values, 2)}")


if __name__ == "__main__":
    if len(sys.argv) < 2 or any("=" not in a for a in sys.argv[1:]):
        sys.exit(__doc__)
    main(sys.argv[1:])
