"""The panels' pack (`pack_panels_pair` in blas_helpers.cl) transposing both operands, alone,
built with each side of its squares (PACK_SUB) in turn, in ROUNDS rounds: each figure the
median and the best of nine launches timed by their events (`pack_panels_bench.pack_ms`),
every pack's panels checked against NumPy. SIZE is a multiple of the panel's 128 rows. Usage:
    python scripts/pack_sub_sweep.py DEVICE SIZE ROUNDS SUB [SUB...]"""

import sys
import time

from pack_panels_bench import PANEL, pack_ms

import clgemm
from clgemm.library import gemm as api


def main(device: str, n: int, rounds: int, subs: list[int]) -> None:
    if n % PANEL:
        sys.exit(f"SIZE must be a multiple of {PANEL}")
    be = api.backend_for(device, "opencl")
    print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, clgemm "
          f"from {clgemm.__file__}; {n}x{n}, both operands transposed; ms, median/best of 9",
          flush=True)
    rows: dict[int, list[str]] = {s: [] for s in subs}
    for _ in range(rounds):
        for sub in subs:
            median, best, ok = pack_ms(be, n, 1, sub, launches=9)
            rows[sub].append(f"{median:.2f}/{best:.2f}" + ("" if ok else " WRONG"))
    for sub, cells in rows.items():
        print(f"PACK_SUB={sub}: " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(s) for s in sys.argv[4:]])
