"""cuBLAS's SGEMM kernel and the tiled kernel side by side at 4096 cubed on the H100, from the
files of results/h100/gap: Nsight Compute's sections (ncu-cublas.txt, ncu-tiled.txt) and
metrics (stalls-cublas.txt, stalls-tiled.txt), as a Markdown table; with --vectors DIR, the
runs of run-vectors.sh in DIR (kernel only, A read as VWM-float vectors) beside cuBLAS's.
Usage: python3 scripts/gap_table.py [DIR] | --vectors DIR"""

import re
import sys
from pathlib import Path

SECTIONS = ("Duration", "SM Frequency", "Executed Instructions", "Issue Slots Busy",
            "No Eligible", "Warp Cycles Per Issued Instruction", "Registers Per Thread",
            "Block Size", "Grid Size", "Achieved Active Warps Per SM")
METRICS = {
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "FFMA (thread instructions)",
    "smsp__inst_executed_op_shared_ld.sum": "local (shared) loads, warp instructions",
    "smsp__inst_executed_op_ldgsts.sum": "cp.async (LDGSTS), warp instructions",
    "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active": "FMA pipe, % of peak",
    "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active": "ALU pipe, % of peak",
    "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_active": "ADU pipe, % of peak",
    "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active": "LSU pipe, % of peak",
}
STALLS = re.compile(r"smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio")


def values(path: Path) -> dict[str, str]:
    """Metric name -> value as printed, from the section tables and the --metrics list."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        if len(parts) >= 2 and not line.startswith("#"):
            found.setdefault(parts[0], parts[-1].split()[-1])
    return found


def main(root: Path) -> None:
    kernels = ("cublas", "tiled")
    sections = [values(root / f"ncu-{k}.txt") for k in kernels]
    metrics = [values(root / f"stalls-{k}.txt") for k in kernels]
    print("| at 4096 cubed (Nsight Compute's clocks) | cuBLAS | tiled kernel (gemm()) |")
    print("|---|---|---|")
    for name in SECTIONS:
        print(f"| {name} | {sections[0].get(name, '-')} | {sections[1].get(name, '-')} |")
    for name, label in METRICS.items():
        print(f"| {label} | {metrics[0].get(name, '-')} | {metrics[1].get(name, '-')} |")
    reasons = sorted({m.group(1) for d in metrics for k in d if (m := STALLS.fullmatch(k))})
    for reason in reasons:
        key = f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"
        pair = [d.get(key, "-") for d in metrics]
        if any(v not in ("0", "0.00", "-") for v in pair):
            print(f"| warps stalled ({reason}) per issue | {pair[0]} | {pair[1]} |")


def vectors(root: Path) -> None:
    """GFLOP/s per backend, size and width, from the ladder outputs vwmW-BACKEND-SIZE-TURN.txt
    (the tiled kernel's row, and cuBLAS's reference row where the run has one)."""
    rows: dict[tuple[str, int], dict[int, list[float]]] = {}
    cublas: dict[int, list[float]] = {}
    for f in sorted(root.glob("vwm*.txt")):
        width, backend, size, _ = f.stem.split("-")
        at = None  # where the GFLOP/s column starts in the table's lines
        for line in f.read_text().splitlines():
            cells = line.split()
            if cells[:2] == ["rung", "name"]:
                at = line.index("GFLOP/s")
            elif at is not None and cells[:2] == ["12", "tiled"] and cells[-1] == "ok":
                rows.setdefault((backend, int(size)), {}).setdefault(int(width[3:]), []).append(
                    float(line[at:].split()[0]))
            elif at is not None and cells[:3] == ["ref", "cuBLAS", "SGEMM"]:
                cublas.setdefault(int(size), []).append(float(line[at:].split()[0]))
    widths = sorted({w for r in rows.values() for w in r})
    print("| backend | size | " + " | ".join(f"VWM={w}" for w in widths) + " | cuBLAS |")
    print("|---|---|" + "---|" * (len(widths) + 1))
    for (backend, size), by_width in sorted(rows.items()):
        cells = [" ".join(f"{g:,.0f}" for g in by_width.get(w, [])) or "-" for w in widths]
        ref = " ".join(f"{g:,.0f}" for g in cublas.get(size, []))
        print(f"| {backend} | {size}^3 | " + " | ".join(cells) + f" | {ref} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--vectors"]:
        vectors(Path(sys.argv[2]))
    else:
        main(Path(sys.argv[1] if len(sys.argv) > 1 else "results/h100/gap"))
