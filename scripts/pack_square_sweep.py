"""The panels' pack (`pack_panels_pair` in blas_helpers.cl) alone, as gemm() runs it on
C-ordered NumPy operands of a CPU form of the tiled kernel (the first operand read as stored,
the second transposed) and with both transposed, built with each side of its squares
(PACK_SUB) and each run of columns a work-item packs (PANEL_RUN) in turn, in ROUNDS rounds.
Each cell is the median/best of nine launches in ms, timed by their events
(`pack_panels_bench.pack_ms`); every pack's panels are checked against NumPy. PANEL_A and
PANEL_B are the panels' heights (the kernel's TSM and TSN), dividing SIZE. Usage:
    python scripts/pack_square_sweep.py DEVICE SIZE PANEL_A PANEL_B ROUNDS"""

import sys
import time

from pack_panels_bench import pack_ms

import clgemm
from clgemm.library import gemm as api

SUBS = (4, 8, 16)
RUNS = (64, 256, 1024)
#: (first operand transposed, second transposed): gemm()'s case for C-ordered operands, then both
FORMS = ((0, 1), (1, 1))


def main(device: str, n: int, panels: tuple[int, int], rounds: int) -> None:
    if n % panels[0] or n % panels[1]:
        sys.exit("PANEL_A and PANEL_B must divide SIZE")
    be = api.backend_for(device, "opencl")
    print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, clgemm "
          f"from {clgemm.__file__}; {n}x{n}, panels of {panels[0]} and {panels[1]} rows; "
          f"ms, median/best of 9 launches, one cell a round", flush=True)
    cells: dict[tuple, list[str]] = {}
    for _ in range(rounds):
        for trans in FORMS:
            for run in RUNS:
                for sub in SUBS:
                    median, best, ok = pack_ms(be, n, trans, sub, launches=9, panels=panels,
                                               run=run)
                    cells.setdefault((trans, run, sub), []).append(
                        f"{median:.3f}/{best:.3f}" + ("" if ok else " WRONG"))
    for (trans, run, sub), row in cells.items():
        form = "as stored + transposed" if trans == (0, 1) else "both transposed"
        print(f"{form:24s} PANEL_RUN={run:<5d} PACK_SUB={sub:<3d} " + "  ".join(row), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), (int(sys.argv[3]), int(sys.argv[4])), int(sys.argv[5]))
