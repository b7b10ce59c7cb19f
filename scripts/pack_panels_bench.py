"""The time of the panels' pack (`pack_panels_pair` in blas_helpers.cl) alone, on a device
through OpenCL: both operands SIZE x SIZE, read as stored and read transposed, each the median
(and best) of seven launches timed by the launch's events, its panels checked against NumPy.
From whichever package is first on PYTHONPATH, so that two trees can be timed in turns:
    python scripts/pack_panels_bench.py DEVICE SIZE"""

import sys

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.configs import launch
from clgemm.configs.launch import HELPERS_FILE, PANEL_RUN

PANEL = 128


def pack_ms(be, n: int, trans: int | tuple[int, int], sub: int | None = None,
            launches: int = 7, panels: tuple[int, int] = (PANEL, PANEL),
            run: int = PANEL_RUN) -> tuple[float, float, bool]:
    """The median and the best of `launches` packs of two n x n operands (`trans` for both, or
    one flag each), and whether both operands' panels were right; with `sub`, the pack built
    with squares of that side (PACK_SUB) instead of gemm()'s, `panels` rows high and `run`
    columns a work-item."""
    flags = (trans, trans) if isinstance(trans, int) else trans
    build = getattr(launch, "panels_pair_kernel", None)  # a package from before it: as it built
    defines = {"PANEL_A": panels[0], "PANEL_B": panels[1], "PANEL_RUN": run}
    if sub is not None:
        knl = be.program(HELPERS_FILE, {**defines, "PACK_SUB": sub}, "pack_panels_pair")
    elif build is not None:
        knl = build(be, *panels)
    else:
        knl = be.program(HELPERS_FILE, defines, "pack_panels_pair")
    host = np.random.default_rng(n).random((n, n), dtype=np.float32)
    x, outs = be.to_device(host), (be.alloc(n * n), be.alloc(n * n))
    blocks = [n // p * -(-n // run) for p in panels]
    args = [n, n, n, x, 0, n, flags[0], outs[0], blocks[0],
            n, n, n, x, 0, n, flags[1], outs[1], blocks[1]]
    times = sorted(be.launch(knl, (sum(blocks),), (1,), args) for _ in range(launches))
    stored = host.reshape(-1).reshape(n, n).T  # column-major: element (i, j) at i + j * n
    ok = True
    for out, panel, flag in zip(outs, panels, flags):
        op = stored.T if flag else stored
        want = op.reshape(n // panel, panel, n).transpose(0, 2, 1).reshape(-1)
        ok = ok and np.array_equal(be.to_host(out, n * n), want)
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
