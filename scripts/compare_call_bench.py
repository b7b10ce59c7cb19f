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
        call_ratios.append(rc)
        rk = ratio(y["kernel_gflops"], x["kernel_gflops"])
        if rk is not None:
            kernel_ratios.append(rk)
        print(f"| {'x'.join(map(str, shape))} | {cell(x['call_gflops'])} | "
              f"{cell(y['call_gflops'])} | {rc:.2f} | {cell(x['kernel_gflops'])} | "
              f"{cell(y['kernel_gflops'])} | {fmt(rk)} | "
              f"{fmt(ratio(x['call_gflops'], x['kernel_gflops']))} | "
              f"{fmt(ratio(y['call_gflops'], y['kernel_gflops']))} | "
              f"{y['choice'].split(' (')[0]} |")
    geo = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
    kernels = (f"kernel {geo(kernel_ratios):.2f} (lowest {min(kernel_ratios):.2f})"
               if kernel_ratios else "kernel -")
    print(f"\nafter / before, geo-mean: call {geo(call_ratios):.2f} (lowest "
          f"{min(call_ratios):.2f}), {kernels}; GFLOP/s")


def ratio(x: float | None, y: float | None) -> float | None:
    """x / y where both were measured (a row's kernel time is missing where the bench did not
    know the kernel's name)."""
    return x / y if x and y else None


def fmt1(ms: float | None) -> str:
    """Milliseconds as microseconds, one decimal."""
    return "-" if not ms else f"{ms * 1e3:.1f}"


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


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
              f"{y['call_ms'] * 1e3:.1f} | "
              f"{fmt1(y['kernel_ms'])} | "
              + " | ".join(f"{r['ms'] * 1e3:.1f}" if r.get("status") == "ok" else ""
                           for r in refs) + " |")


if __name__ == "__main__":
    if sys.argv[1] == "--us":
        main_us(*sys.argv[2:4])
    else:
        main(*sys.argv[1:3])
