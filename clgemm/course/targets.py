"""The results page's statement of where the project stands against its staged targets, generated
from the committed bench runs so that no ratio in it is ever typed by hand.

The targets are read off bench files alone: on a GPU, the best rung at 4096³ against cuBLAS (the
OpenCL path is compared with the cuBLAS of the same GPU's CUDA bench, since CLBlast is the only
library on the OpenCL side) and against CLBlast at every shape whose M and N are 1024 or more; on
a CPU, the best rung against CLBlast and NumPy at 1024³ and 2048³.
"""

from __future__ import annotations

from typing import Iterable

from clgemm.backends.registry import label
from clgemm.course.data import Bench, Results
from clgemm.course.tables import DASH, gflops, link, size_text

GPU_SHAPE = (4096, 4096, 4096)
CPU_SHAPES = ((1024, 1024, 1024), (2048, 2048, 2048))
#: bench shapes whose M and N are at least this count as "large" for the CLBlast comparison
LARGE = 1024
#: the backends the targets are set for, as bench files name them
OPENCL, CUDA = "opencl", "cuda"


def _row(bench: Bench, shape: tuple[int, int, int]) -> dict | None:
    return next((r for r in bench.rows if tuple(r["shape"]) == shape), None)


def _best(row: dict | None) -> float | None:
    best = (row or {}).get("best") or {}
    return best.get("gflops") if best.get("status", "ok") == "ok" else None


def _reference(row: dict | None, key: str) -> float | None:
    for ref in (row or {}).get("references") or []:
        if ref.get("key") == key and ref.get("status") == "ok":
            return ref.get("gflops")
    return None


def _share(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}×" if a and b else DASH


def _percent(a: float | None, b: float | None) -> str:
    # one decimal: a share set against a target must not round up onto it
    return f"{100 * a / b:.1f}%" if a and b else DASH


def _by_backend(benches: Iterable[Bench], backend: str) -> dict[str, Bench]:
    return {b.device.name: b for b in benches if b.device.backend == backend}


def _worst_against_clblast(bench: Bench) -> tuple[float, tuple] | None:
    ratios: list[tuple[float, tuple]] = []
    for r in bench.rows:
        best, clblast = _best(r), _reference(r, "clblast")
        if min(r["shape"][:2]) >= LARGE and best and clblast:
            ratios.append((best / clblast, tuple(r["shape"])))
    return min(ratios) if ratios else None


def _gpu_lines(name: str, opencl: Bench | None, cuda: Bench | None, here: str) -> list[str]:
    lines = [f"- **{name}**"]
    cublas = _reference(_row(cuda, GPU_SHAPE), "cublas") if cuda else None
    shape = size_text(GPU_SHAPE)
    if opencl is not None:
        row = _row(opencl, GPU_SHAPE)
        best, clblast = _best(row), _reference(row, "clblast")
        lines.append(f"  - {label(OPENCL)} ({link(opencl.path, here, opencl.path)}), {shape}: "
                     f"best rung {gflops(best)} GFLOP/s, {_percent(best, cublas)} of cuBLAS "
                     f"(target 80%), {_share(best, clblast)} CLBlast (target above 1×).")
        worst = _worst_against_clblast(opencl)
        if worst:
            lines.append(f"  - {label(OPENCL)} against CLBlast at every bench shape with M, N "
                         f"≥ {LARGE}: lowest {worst[0]:.2f}× (at {size_text(worst[1])}; target "
                         f"above 1×).")
    if cuda is not None:
        best = _best(_row(cuda, GPU_SHAPE))
        lines.append(f"  - {label(CUDA)} path ({link(cuda.path, here, cuda.path)}), {shape}: "
                     f"best rung {gflops(best)} GFLOP/s, {_percent(best, cublas)} of cuBLAS "
                     f"({gflops(cublas)} GFLOP/s in the same run; target 85%).")
    return lines


def _cpu_lines(bench: Bench, here: str) -> list[str]:
    lines = [f"- **{bench.device.label}** ({link(bench.path, here, bench.path)})"]
    for shape in CPU_SHAPES:
        row = _row(bench, shape)
        if row is None:
            continue
        best = _best(row)
        clblast, numpy = _reference(row, "clblast"), _reference(row, "numpy")
        lines.append(f"  - {size_text(shape)}: best rung {gflops(best)} GFLOP/s, "
                     f"{_share(best, clblast)} CLBlast (target 3×), {_percent(best, numpy)} of "
                     f"NumPy's BLAS at {gflops(numpy)} GFLOP/s (target 40%).")
    return lines


def targets_block(results: Results, here: str = ".") -> str:
    """One bullet per device with a bench run: the staged targets against the measurements."""
    gpus = [b for b in results.benches if b.device.kind != "CPU"]
    cpus = [b for b in results.benches if b.device.kind == "CPU"]
    opencl, cuda = _by_backend(gpus, OPENCL), _by_backend(gpus, CUDA)
    lines: list[str] = []
    for name in sorted(set(opencl) | set(cuda)):
        lines += _gpu_lines(name, opencl.get(name), cuda.get(name), here)
    for bench in cpus:
        lines += _cpu_lines(bench, here)
    return "\n".join(lines) if lines else "No bench run in `results/` yet."
