"""The panels' pack (`pack_panels_pair`) of square operands on a cold cache, as a call after a
long kernel finds them: an operand read as stored packed by blocks of a panel
(PACK_COLUMNS=0) and by whole columns (PACK_COLUMNS=1), in turns, alone and beside the other
operand read transposed. Before each launch a buffer larger than the last-level cache is
written, so the operands come from memory and the cache holds dirty lines. Prints the median
and the lowest of ROUNDS launches, by the launch events.
    python scripts/pack_columns_ab.py DEVICE SIZE PANEL ROUNDS"""

import statistics
import sys
import time

import numpy as np
import pyopencl as cl

from clgemm.library import gemm as api
from clgemm.configs.launch import HELPERS_FILE, PANEL_RUN, pack_square


def main() -> None:
    device, n, panel, rounds = sys.argv[1], *map(int, sys.argv[2:5])
    be = api.backend_for(device)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    bufs = [be.host_buffer(x.reshape(-1), writable=False) for x in (a, b)]
    outs = [cl.Buffer(be.context, cl.mem_flags.READ_WRITE, 4 * n * n) for _ in range(2)]
    flush = np.ones(64 << 20, np.float32)  # 256 MiB
    blocks = n // panel * -(-n // PANEL_RUN)
    i32 = np.int32
    forms = {"straight": (blocks, 0), "straight + transposed": (blocks, blocks)}
    times: dict[tuple[int, str], list[float]] = {}
    knls = {c: be.program(HELPERS_FILE, {"PANEL_A": panel, "PANEL_B": panel,
                                         "PANEL_RUN": PANEL_RUN,
                                         "PACK_SUB": pack_square(be.device),
                                         "PACK_COLUMNS": c}, "pack_panels_pair")
            for c in (0, 1)}
    for _ in range(rounds):
        for columns, knl in knls.items():
            for form, (ba, bb) in forms.items():
                knl.set_args(i32(n), i32(n), i32(n), bufs[0], i32(0), i32(n), i32(0), outs[0],
                             i32(ba), i32(n), i32(n), i32(n), bufs[1], i32(0), i32(n), i32(1),
                             outs[1], i32(bb))
                flush[::16] += 1
                event = cl.enqueue_nd_range_kernel(be.queue, knl, (ba + bb,), (1,))
                event.wait()
                ms = (event.profile.end - event.profile.start) * 1e-6
                times.setdefault((columns, form), []).append(ms)
    print(f"# {be.device.name}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: "
          f"{n}^3, panels of {panel}, {rounds} rounds in turns, ms")
    for (columns, form), ms in times.items():
        print(f"PACK_COLUMNS={columns} {form:22s} median {statistics.median(ms):.3f}  "
              f"lowest {min(ms):.3f}")


if __name__ == "__main__":
    main()
