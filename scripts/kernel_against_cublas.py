"""The best rung's kernel time against cuBLAS's, from two `clgemm bench --json` files (without
--call) of the same sizes on one NVIDIA GPU: the CUDA file holds cuBLAS's run, the OpenCL file
the kernel through NVIDIA's OpenCL, so its rows are set against cuBLAS's times of the CUDA
file. Prints a Markdown table of GFLOP/s and the ratio (above 1: the kernel is faster).

    python3 scripts/kernel_against_cublas.py CUDA.json [OPENCL.json]
"""

from __future__ import annotations

import sys

from against_cublas import ok_rows


def _cublas(row: dict) -> float | None:
    refs = [r for r in row["references"] if r.get("key") == "cublas" and r["status"] == "ok"]
    return refs[0]["gflops"] if refs else None


def main(cuda_path: str, opencl_path: str | None = None) -> None:
    cuda = ok_rows(cuda_path)
    opencl = ok_rows(opencl_path) if opencl_path else {}
    files = f"{cuda_path} and {opencl_path}" if opencl_path else cuda_path
    print(f"{files}, GFLOP/s, the times including the transpose of B\n")
    print("| backend | shape | kernel | cuBLAS (CUDA run) | x cuBLAS |")
    print("|---|---|---|---|---|")
    for backend, rows in (("CUDA", cuda), ("OpenCL", opencl)):
        for shape, row in rows.items():
            ref = _cublas(cuda[shape]) if shape in cuda else None
            if ref is None:
                continue
            gflops = row["best"]["gflops"]
            print(f"| {backend} | {'x'.join(map(str, shape))} | {gflops:,.0f} | {ref:,.0f} | "
                  f"{gflops / ref:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
