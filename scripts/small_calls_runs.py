"""The libraries' own calls beside gemm()'s in the `small` sets of several target runs: how far a
loan's host moved every call, the libraries' included.
    python scripts/small_calls_runs.py DIR [DIR...]    (each holding small-cuda.json, small-opencl.json)"""

import json
import sys


def rows(dirs: list[str]):
    for backend in ("cuda", "opencl"):
        for d in dirs:
            data = json.load(open(f"{d}/small-{backend}.json"))
            for r in data["rows"]:
                for name, ref in r.get("references", {}).items():
                    if ref.get("ms") is not None and "tuned" not in name:
                        yield (backend, r["shape"], d.rstrip("/").rsplit("/", 1)[-1], name,
                               ref["ms"] * 1e3, r["call_ms"] * 1e3)


def main() -> None:
    print("| backend | shape | run | library | library µs | gemm() µs |")
    print("|---|---|---|---|---|---|")
    for backend, shape, run, name, lib, ours in sorted(rows(sys.argv[1:]),
                                                        key=lambda x: (x[0], x[1], x[2])):
        print(f"| {backend} | {'x'.join(map(str, shape))} | {run} | {name} | {lib:.1f} | "
              f"{ours:.1f} |")


if __name__ == "__main__":
    main()
