"""The time of the panels' pack (`pack_panels_pair` in blas_helpers.cl) alone, on a device
through OpenCL: both operands SIZE x SIZE, read as stored and read transposed, each the median
(and best) of seven launches timed by the launch's events, its panels checked against NumPy.
From whichever package is first on PYTHONPATH, so that two trees can be timed in turns:
    python scripts/pack_panels_bench.py DEVICE SIZE"""

import sys

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.library import program
from clgemm.library.program import HELPERS_FILE, PANEL_RUN

PANEL = 128


def pack_ms(be, n: int, trans: int, sub: int | None = None,
            launches: int = 7) -> tuple[float, float, bool]:
    """The median and the best of `launches` packs, and whether the panels were right; with
    `sub`, the pack built with squares of that side (PACK_SUB) instead of gemm()'s."""
    build = getattr(program, "panels_pair_kernel", None)  # a package from before it: as it built
    defines = {"PANEL_A": PANEL, "PANEL_B": PANEL, "PANEL_RUN": PANEL_RUN}
    if sub is not None:
        knl = be.program(HELPERS_FILE, {**defines, "PACK_SUB": sub}, "pack_panels_pair")
    elif build is not None:
        knl = build(be, PANEL, PANEL)
    else:
        knl = be.program(HELPERS_FILE, defines, "pack_panels_pair")
    host = np.random.default_rng(n).random((n, n), dtype=np.float32)
    x, out_a, out_b = be.to_device(host), be.alloc(n * n), be.alloc(n * n)
    blocks = n // PANEL * -(-n // PANEL_RUN)
    args = [n, n, n, x, 0, n, trans, out_a, blocks, n, n, n, x, 0, n, trans, out_b, blocks]
    times = sorted(be.launch(knl, (2 * blocks,), (1,), args) for _ in range(launches))
    stored = host.reshape(-1).reshape(n, n).T  # column-major: element (i, j) at i + j * n
    op = stored.T if trans else stored
    want = op.reshape(n // PANEL, PANEL, n).transpose(0, 2, 1).reshape(-1)
    ok = all(np.array_equal(be.to_host(out, n * n), want) for out in (out_a, out_b))
    return times[launches // 2], times[0], ok


def main(device: str, n: int) -> None:
    if n % PANEL:
        sys.exit(f"SIZE must be a multiple of {PANEL}")
    be = api.backend_for(device, "opencl")
    print(f"# clgemm from {clgemm.__file__}")
    for trans in (0, 1):
        median, best, ok = pack_ms(be, n, trans)
        print(f"{be.device.name}: {n}x{n}, {'transposed' if trans else 'as stored'}: "
              f"{median:.3f} ms (best {best:.3f}), both operands; panels {'ok' if ok else 'WRONG'}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]))
