"""gemm()'s calls on both backends against cuBLAS's, from two `clgemm bench --call --json` files
of one run's shapes on one NVIDIA GPU: the CUDA file holds cuBLAS's call, the OpenCL file
gemm()'s call through NVIDIA's OpenCL. Prints a Markdown table in microseconds per call, each
backend's ratio (cuBLAS's time over gemm()'s, so above 1 is faster) and their geo-means.

    python3 scripts/against_cublas.py CUDA.json OPENCL.json [MIN_SIDE]

With MIN_SIDE, only the shapes whose every side is at least that (the large products' class).
OPENCL.json may be "-": the CUDA path alone, its OpenCL columns left empty.
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from pathlib import Path


def ok_rows(path: str) -> dict[tuple[int, ...], dict]:
    """The rows that ran, by shape, of a bench JSON file (gzip-compressed where it ends in .gz,
    as files kept out of the course's pages are)."""
    raw = Path(path).read_bytes()
    text = gzip.decompress(raw) if path.endswith(".gz") else raw
    return {tuple(r["shape"]): r for r in json.loads(text)["rows"] if r["status"] == "ok"}


def main(cuda_path: str, opencl_path: str, min_side: int = 0) -> None:
    cuda = ok_rows(cuda_path)
    opencl = ok_rows(opencl_path) if opencl_path != "-" else None
    cuda = {shape: row for shape, row in cuda.items() if min(shape[-3:]) >= min_side}
    print(f"{cuda_path} and {opencl_path}, microseconds per call\n")
    print("| shape | cuBLAS | gemm(), CUDA | cuBLAS / CUDA | gemm(), OpenCL | cuBLAS / OpenCL |")
    print("|---|---|---|---|---|---|")
    ratios: dict[str, list[float]] = {"CUDA": [], "OpenCL": []}
    for shape, row in cuda.items():
        ref = row["references"].get("cuBLAS", {})
        if ref.get("status") != "ok" or (opencl is not None and shape not in opencl):
            continue
        us = {"CUDA": row["call_ms"] * 1e3}
        if opencl is not None:
            us["OpenCL"] = opencl[shape]["call_ms"] * 1e3
        cells = []
        for name, t in us.items():
            ratios[name].append(ref["ms"] * 1e3 / t)
            cells += [f"{t:,.1f}", f"{ratios[name][-1]:.2f}"]
        cells += ["–", "–"] * (2 - len(us))
        print(f"| {'x'.join(map(str, shape))} | {ref['ms'] * 1e3:,.1f} | " + " | ".join(cells)
              + " |")
    print()
    for name, values in ratios.items():
        if values:
            print(f"{name}: {summary(values, 3)}")


def summary(values: list[float], digits: int) -> str:
    """Ratios to cuBLAS (above 1: gemm() faster) in one line: geo-mean, lowest, how many at 0.8."""
    mean = math.exp(sum(map(math.log, values)) / len(values))
    return (f"geo-mean {mean:.{digits}f} x cuBLAS, lowest {min(values):.2f}, "
            f"{sum(v >= 0.8 for v in values)} of {len(values)} shapes at 0.8 or more")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 0)
