"""gemm(a, b, c) on NumPy arrays on a CPU device, for square SIZEs, with the arrays where NumPy
allocates them and with the same values at addresses rounded to 4096 bytes, in turns (ROUNDS
of each), C given: the median milliseconds of 5 calls each turn after calls for WARM_S. Whether
a driver that is given an operand's own memory (USE_HOST_PTR) works there at NumPy's
alignment, or pays a copy of its own. The float64 reference is computed before any timing and
the results checked after all of a size's turns: NumPy's threads, busy for a while after a
product of their own, slowed the calls that followed one several times over.
    python scripts/cpu_aligned_call.py DEVICE ROUNDS SIZE [SIZE...]"""

import statistics
import sys
import time

import numpy as np

import clgemm
from host_ptr_probe import aligned


#: seconds of untimed calls before each turn's timed ones
WARM_S = 0.5


def timed(device: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < WARM_S:
        clgemm.gemm(a, b, c, device=device)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        clgemm.gemm(a, b, c, device=device)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main(device: str, rounds: int, sizes: list[int]) -> None:
    rng = np.random.default_rng(0)
    for n in sizes:
        plain = [rng.standard_normal((n, n), dtype=np.float32) for _ in range(3)]
        moved = [aligned(n) for _ in range(3)]
        for x, y in zip(moved, plain):
            x[...] = y
        want = plain[0].astype(np.float64) @ plain[1]
        time.sleep(1.0)  # NumPy's threads idle again
        for turn in range(rounds):
            for name, (a, b, c) in (("as allocated", plain), ("at 4096 bytes", moved)):
                ms = timed(device, a, b, c)
                print(f"{n}^3 turn {turn + 1} {name:13s} (address % 4096 = "
                      f"{a.ctypes.data % 4096:4d}): {ms:9.2f} ms, "
                      f"{2 * n**3 / ms / 1e6:7.1f} GFLOP/s")
        for name, c in (("as allocated", plain[2]), ("at 4096 bytes", moved[2])):
            err = float(np.abs(c - want).max() / np.abs(want).max())
            print(f"{n}^3 {name}: relative error {err:.1e}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), [int(s) for s in sys.argv[3:]])
