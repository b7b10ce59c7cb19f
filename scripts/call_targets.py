"""Where gemm()'s call stands against the GPU targets of "Every call at the cost of one launch",
from one run's `clgemm bench --call --json` files in DIR, named SET-BACKEND.json: SET is small,
classes, default (the bench's own GPU set) or stacks, BACKEND cuda or opencl. The CUDA files
hold cuBLAS's calls (CuPy), the OpenCL files CLBlast's, untuned and tuned. Prints Markdown:
each target, the shapes it covers with their figures, and whether it is met. With TAG, the
files are named SET-BACKEND-TAG.json (one run's databases beside another's in one folder).

    python3 scripts/call_targets.py DIR [TAG]
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from clgemm.measure.call_bench import gemm_over

#: microseconds per call at 64-512 cubed, repeated signature, device arrays
US_TARGETS = {"cuda": 15.0, "opencl": 20.0}
SMALL_UP_TO = 512
#: each shape of the classes and the default set against cuBLAS, and their geo-mean
EACH_CUBLAS, GEO_CUBLAS = 0.8, 0.9


@dataclass(frozen=True)
class Files:
    """One run's files: FOLDER/SET-BACKEND[-TAG].json."""

    folder: Path
    tag: str = ""

    def rows(self, name: str) -> dict[tuple[int, ...], dict]:
        path = self.folder / (f"{name}-{self.tag}.json" if self.tag else f"{name}.json")
        if not path.is_file():
            return {}
        return {tuple(r["shape"]): r for r in json.loads(path.read_text())["rows"]
                if r["status"] == "ok"}


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape))


def _ref_ms(row: dict, key: str) -> float | None:
    ref = row["references"].get(key, {})
    return ref["ms"] if ref.get("status") == "ok" else None


def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def _geo(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def small(files: Files) -> None:
    print("## Microseconds per call at 64-512 cubed (C given, device arrays)\n")
    print("| backend | shape | gemm() µs | library µs | target µs | |")
    print("|---|---|---|---|---|---|")
    for be, limit in US_TARGETS.items():
        ref = "cuBLAS" if be == "cuda" else "CLBlast"
        for shape, row in files.rows(f"small-{be}").items():
            if max(shape) > SMALL_UP_TO:
                continue
            us, lib = row["call_ms"] * 1e3, _ref_ms(row, ref)
            lib_text = f"{ref} {lib * 1e3:.1f}" if lib is not None else "–"
            print(f"| {be} | {_shape(shape)} | {us:.1f} | {lib_text} | {limit:.0f} | "
                  f"{_verdict(us <= limit)} |")
    print()


def stacks(files: Files) -> None:
    print("## Stacks against the libraries' batched calls (C given, device arrays)\n")
    print("| backend | products x M x N x K | gemm() µs | library | library µs | library / gemm() | |")
    print("|---|---|---|---|---|---|---|")
    for be, refs in (("cuda", ("cuBLAS",)), ("opencl", ("CLBlast", "CLBlast (tuned)"))):
        for shape, row in files.rows(f"stacks-{be}").items():
            us = row["call_ms"] * 1e3
            found = [(key, ms) for key in refs if (ms := _ref_ms(row, key)) is not None]
            if not found:
                continue
            key, ms = min(found, key=lambda kv: kv[1])  # the faster library call
            over = gemm_over(row, row["references"][key])  # against gemm() beside it
            print(f"| {be} | {_shape(shape)} | {us:.1f} | {key} | {ms * 1e3:.1f} | "
                  f"{over:.2f} | {_verdict(over >= 1.0)} |")
    print()


def classes(files: Files) -> None:
    print("## The classes and the default set: against cuBLAS (both backends) and CLBlast "
          "(OpenCL)\n")
    cuda = {**files.rows("classes-cuda"), **files.rows("default-cuda")}
    opencl = {**files.rows("classes-opencl"), **files.rows("default-opencl")}
    print("| shape | cuBLAS µs | CUDA µs | cuBLAS / CUDA | OpenCL µs | cuBLAS / OpenCL | "
          "better CLBlast µs | CLBlast / OpenCL |")
    print("|---|---|---|---|---|---|---|---|")
    ratios: dict[str, list[tuple[float, str]]] = {"CUDA": [], "OpenCL": [], "CLBlast": []}
    for shape, row in cuda.items():
        blas = _ref_ms(row, "cuBLAS")
        if blas is None:
            continue
        cells = [_shape(shape), f"{blas * 1e3:.1f}", f"{row['call_ms'] * 1e3:.1f}",
                 f"{blas / row['call_ms']:.2f}"]
        ratios["CUDA"].append((blas / row["call_ms"], _shape(shape)))
        o = opencl.get(shape)
        if o is None:
            print("| " + " | ".join(cells + ["–"] * 4) + " |")
            continue
        ratios["OpenCL"].append((blas / o["call_ms"], _shape(shape)))
        clb = [ms for key in ("CLBlast", "CLBlast (tuned)") if (ms := _ref_ms(o, key))]
        # each against gemm() timed beside it in turns: the lower is against the better one
        overs = [over for key in ("CLBlast", "CLBlast (tuned)")
                 if (over := gemm_over(o, o["references"].get(key, {}))) is not None]
        cells += [f"{o['call_ms'] * 1e3:.1f}", f"{blas / o['call_ms']:.2f}"]
        if clb:
            ratios["CLBlast"].append((min(overs), _shape(shape)))
            cells += [f"{min(clb) * 1e3:.1f}", f"{min(overs):.2f}"]
        else:
            cells += ["–", "–"]
        print("| " + " | ".join(cells) + " |")
    print()
    for name in ("CUDA", "OpenCL"):
        values = ratios[name]
        if not values:
            continue
        low, worst = min(values)
        geo = _geo([v for v, _ in values])
        print(f"- {name} against cuBLAS: lowest {low:.2f} ({worst}; each ≥ {EACH_CUBLAS}: "
              f"{_verdict(low >= EACH_CUBLAS)}, {sum(v >= EACH_CUBLAS for v, _ in values)} of "
              f"{len(values)}), geo-mean {geo:.2f} (≥ {GEO_CUBLAS}: {_verdict(geo >= GEO_CUBLAS)})")
    if ratios["CLBlast"]:
        low, worst = min(ratios["CLBlast"])
        print(f"- OpenCL against the better of CLBlast untuned and tuned: lowest {low:.2f} "
              f"({worst}; each ≥ 1.0: {_verdict(low >= 1.0)}), geo-mean "
              f"{_geo([v for v, _ in ratios['CLBlast']]):.2f}")
    print()


def main(folder: Path, tag: str = "") -> None:
    files = Files(folder, tag)
    for part in (small, stacks, classes):
        part(files)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), *sys.argv[2:])
