"""The panels' pack (`pack_panels_pair` in blas_helpers.cl) transposing both operands, alone,
built with each side of its squares (PACK_SUB) in turn, in ROUNDS rounds: each figure the
median and the best of nine launches timed by their events, every pack's panels checked
against NumPy. SIZE is a multiple of the panel's 128 rows. Usage:
    python scripts/pack_sub_sweep.py DEVICE SIZE ROUNDS SUB [SUB...]"""

import sys
import time

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.library.program import HELPERS_FILE, PANEL_RUN

PANEL = 128


def main(device: str, n: int, rounds: int, subs: list[int]) -> None:
    if n % PANEL:
        sys.exit(f"SIZE must be a multiple of {PANEL}")
    be = api.backend_for(device, "opencl")
    print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, clgemm "
          f"from {clgemm.__file__}; {n}x{n}, both operands transposed; ms, median/best of 9",
          flush=True)
    host = np.random.default_rng(n).random((n, n), dtype=np.float32)
    x, out_a, out_b = be.to_device(host), be.alloc(n * n), be.alloc(n * n)
    want = host.reshape(n // PANEL, PANEL, n).transpose(0, 2, 1).reshape(-1)
    blocks = n // PANEL * -(-n // PANEL_RUN)
    args = [n, n, n, x, 0, n, 1, out_a, blocks, n, n, n, x, 0, n, 1, out_b, blocks]
    rows: dict[int, list[str]] = {s: [] for s in subs}
    for _ in range(rounds):
        for sub in subs:
            knl = be.program(HELPERS_FILE, {"PANEL_A": PANEL, "PANEL_B": PANEL,
                                            "PANEL_RUN": PANEL_RUN, "PACK_SUB": sub},
                             "pack_panels_pair")
            times = sorted(be.launch(knl, (2 * blocks,), (1,), args) for _ in range(9))
            ok = all(np.array_equal(be.to_host(out, n * n), want) for out in (out_a, out_b))
            rows[sub].append(f"{times[4]:.2f}/{times[0]:.2f}" + ("" if ok else " WRONG"))
    for sub, cells in rows.items():
        print(f"PACK_SUB={sub}: " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(s) for s in sys.argv[4:]])
