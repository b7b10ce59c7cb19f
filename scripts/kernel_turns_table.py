"""The tiled kernel alone against cuBLAS over several turns: for each turn a pair of
`clgemm bench --json` files (without --call) of one GPU, the CUDA run's (with cuBLAS) and the
OpenCL run's, each backend's kernel set against that turn's cuBLAS. Prints a Markdown table of
each turn's ratio and their median per backend and shape (above 1: the kernel is faster).

    python3 scripts/kernel_turns_table.py CUDA_1.json OPENCL_1.json [CUDA_2.json OPENCL_2.json ...]
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict

from against_cublas import ok_rows
from kernel_against_cublas import _cublas


def main(paths: list[str]) -> None:
    if not paths or len(paths) % 2:
        sys.exit("give the files in pairs: CUDA.json OPENCL.json, one pair a turn")
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    for cuda_path, opencl_path in zip(paths[::2], paths[1::2]):
        cuda, opencl = ok_rows(cuda_path), ok_rows(opencl_path)
        for backend, rows in (("CUDA", cuda), ("OpenCL", opencl)):
            for shape, row in rows.items():
                ref = _cublas(cuda[shape]) if shape in cuda else None
                if ref is not None:
                    label = "x".join(map(str, shape))
                    ratios[(backend, label)].append(row["best"]["gflops"] / ref)
    print(f"{len(paths) // 2} turns: {' '.join(paths)}; the kernel over cuBLAS (TF32 off)\n")
    print("| backend | shape | each turn | median |")
    print("|---|---|---|---|")
    for (backend, label), got in ratios.items():
        each = ", ".join(f"{r:.3f}" for r in got)
        print(f"| {backend} | {label} | {each} | {statistics.median(got):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
