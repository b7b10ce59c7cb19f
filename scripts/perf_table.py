"""Print an H100 performance table (as in docs/results.md) from the committed bench results.

    python3 scripts/perf_table.py > table.md
"""

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "results" / "h100"


def main() -> None:
    opencl = json.loads((RESULTS / "bench-opencl.json").read_text())["rows"]
    cuda = json.loads((RESULTS / "bench-cuda.json").read_text())["rows"]
    print("| shape | OpenCL: best rung | GFLOP/s | × CLBlast | CUDA: best rung | GFLOP/s | × cuBLAS |")
    print("|---|---|---|---|---|---|---|")
    for a, b in zip(opencl, cuda):
        assert a["shape"] == b["shape"], (a["shape"], b["shape"])
        print(f"| {'x'.join(map(str, a['shape']))} | {a['best']['rung']} | "
              f"{a['best']['gflops']:,.0f} | {a['ratios']['clblast']:.2f} | {b['best']['rung']} | "
              f"{b['best']['gflops']:,.0f} | {b['ratios']['cublas']:.2f} |")


if __name__ == "__main__":
    main()
