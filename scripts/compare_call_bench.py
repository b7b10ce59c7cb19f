"""Two `clgemm bench --call` JSON files of one device side by side, shape by shape: gemm()'s
call and its kernel alone, before and after, and after over before; with --us, microseconds
per call instead, beside each reference library's of the later file. Usage:
    python scripts/compare_call_bench.py [--us] BEFORE.json AFTER.json"""

import json
import math
import sys


def rows(path: str) -> dict:
    data = json.load(open(path))
    return {tuple(r["shape"]): r for r in data["rows"] if r["status"] == "ok"}, data


def cell(x) -> str:
    return "" if x is None else f"{x:,.0f}"


def main(before_path: str, after_path: str) -> None:
    before, b = rows(before_path)
    after, a = rows(after_path)
    print(f"{a['provenance']['device']} ({a['provenance']['backend']}): {before_path} "
          f"({b['provenance'].get('date', '')}) against {after_path} "
          f"({a['provenance'].get('date', '')})\n")
    print("| shape | call before | call after | after / before | kernel before | kernel after "
          "| after / before | call / kernel, before | call / kernel, after | chosen after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    call_ratios, kernel_ratios = [], []
    for shape in before:
        if shape not in after:
            continue
        x, y = before[shape], after[shape]
        rc = y["call_gflops"] / x["call_gflops"]
        rk = y["kernel_gflops"] / x["kernel_gflops"]
        call_ratios.append(rc)
        kernel_ratios.append(rk)
        print(f"| {'x'.join(map(str, shape))} | {cell(x['call_gflops'])} | "
              f"{cell(y['call_gflops'])} | {rc:.2f} | {cell(x['kernel_gflops'])} | "
              f"{cell(y['kernel_gflops'])} | {rk:.2f} | "
              f"{x['call_gflops'] / x['kernel_gflops']:.2f} | "
              f"{y['call_gflops'] / y['kernel_gflops']:.2f} | {y['choice'].split(' (')[0]} |")
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
    print(f"\nafter / before, geo-mean: call {geo(call_ratios):.2f} (lowest "
          f"{min(call_ratios):.2f}), kernel {geo(kernel_ratios):.2f} (lowest "
          f"{min(kernel_ratios):.2f}); GFLOP/s")


def main_us(before_path: str, after_path: str) -> None:
    before, b = rows(before_path)
    after, a = rows(after_path)
    libraries = sorted({name for r in after.values() for name in r.get("references", {})})
    print(f"{a['provenance']['device']} ({a['provenance']['backend']}): microseconds per call, "
          f"{before_path} ({b['provenance'].get('date', '')}) against {after_path} "
          f"({a['provenance'].get('date', '')})\n")
    print("| shape | gemm() before | gemm() after | kernel after | "
          + " | ".join(libraries) + " |")
    print("|---|---|---|---|" + "---|" * len(libraries))
    for shape in before:
        if shape not in after:
            continue
        x, y = before[shape], after[shape]
        refs = [y.get("references", {}).get(name, {}) for name in libraries]
        print(f"| {'x'.join(map(str, shape))} | {x['call_ms'] * 1e3:.1f} | "
              f"{y['call_ms'] * 1e3:.1f} | {y['kernel_ms'] * 1e3:.1f} | "
              + " | ".join(f"{r['ms'] * 1e3:.1f}" if r.get("status") == "ok" else ""
                           for r in refs) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "--us":
        main_us(*sys.argv[2:4])
    else:
        main(*sys.argv[1:3])
