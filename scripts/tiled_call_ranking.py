"""Whether the tiled kernel's configurations rank the same by a tune's measurement (one launch
timed by its events) and by gemm()'s repeated call (calls back to back, the wall time per call):
the TOP fastest distinct configurations of the given tune journals at one shape, each forced on
gemm() (device arrays, C-ordered, C given, the same call repeated), beside gemm()'s own choice,
in turns for ROUNDS rounds so that a loan's drift falls on all of them alike. Each result is
checked against float64 first. Shapes are the user's (M x N x K); the journals are the kernels'
(N x M x K for a C-ordered call).
Usage: python scripts/tiled_call_ranking.py DEVICE BACKEND MxNxK TOP ROUNDS JOURNAL [JOURNAL...]"""

import gzip
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

import clgemm
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side
from clgemm.measure.call_timing import per_call_ms
from clgemm.rungs.tiled import TILED
from clgemm.tuner.journal import read_journal

SHOWN = ("TSM", "TSN", "TSK", "WPTM", "WPTN", "WIDTH", "VWM", "VWN", "PIPELINE", "RASTER",
         "UNROLL_K", "WARP_M", "KSPLIT")


def journal_rows(path: str) -> list[dict]:
    """The tiled kernel's measured records of a journal, read as the tuner reads one (its rung
    numbers as they are today); a gzip-compressed one through a plain copy."""
    if path.endswith(".gz"):
        with gzip.open(path) as f, tempfile.NamedTemporaryFile(suffix=".jsonl") as plain:
            plain.write(f.read())
            plain.flush()
            _, records, _ = read_journal(Path(plain.name))
    else:
        _, records, _ = read_journal(Path(path))
    return [r for r in records if r.get("status") == "ok" and r.get("gflops")
            and r.get("rung") == TILED.number]


def top_configs(paths: list[str], top: int) -> list[tuple[dict, float, float, str]]:
    """The `top` fastest distinct configurations: (params, GFLOP/s, µs, journal) each."""
    best: dict[tuple, tuple[dict, float, float, str]] = {}
    for path in paths:
        for r in journal_rows(path):
            key = tuple(sorted(r["config"].items()))
            if key not in best or r["gflops"] > best[key][1]:
                best[key] = (r["config"], r["gflops"], r["ms"] * 1e3, path.rsplit("/", 1)[-1])
    return sorted(best.values(), key=lambda v: -v[1])[:top]


def main() -> None:
    dev, backend_name, shape = sys.argv[1], sys.argv[2], sys.argv[3]
    top, rounds = int(sys.argv[4]), int(sys.argv[5])
    m, n, k = (int(d) for d in shape.split("x"))
    be = api.backend_for(dev, backend_name)
    side = Side(be, "device")
    rng = np.random.default_rng(0)
    host_a = rng.standard_normal((m, k), dtype=np.float32)
    host_b = rng.standard_normal((k, n), dtype=np.float32)
    a, b = side.put(host_a), side.put(host_b)
    want = host_a.astype(np.float64) @ host_b
    original = api.CACHE.choose
    candidates: list[tuple[str, Config | None, str]] = [("gemm() as it chooses", None, "- | -")]
    for params, gflops, us, source in top_configs(sys.argv[6:], top):
        label = " ".join(f"{p}={params[p]}" for p in SHOWN if p in params) + f" ({source})"
        candidates.append((label, Config(TILED.number, TILED.resolve(dict(params)), "forced"),
                           f"{gflops:,.0f} | {us:.1f}"))
    times: dict[str, list[float]] = {label: [] for label, _, _ in candidates}
    for _ in range(rounds):
        for label, config, _ in candidates:
            api.CACHE.choose = original if config is None else (lambda d, s, c=config: c)
            api.clear_caches()
            c = side.nan((m, n))  # poisoned: an output the kernel leaves unwritten fails
            clgemm.gemm(a, b, c)
            got = side.get(c)
            error = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
            if not error < 1e-5:
                raise SystemExit(f"{label}: wrong result (relative error {error:.2e})")
            times[label].append(per_call_ms(lambda c=c: clgemm.gemm(a, b, c), side.sync) * 1e3)
    api.CACHE.choose = original
    print(f"# {be.device.name} ({backend_name}), {shape}: µs per call, {rounds} rounds in turns")
    print("| configuration | tune's GFLOP/s | its µs | call µs, each round | median | GFLOP/s a call |")
    print("|---|---|---|---|---|---|")
    flop = 2.0 * m * n * k
    for label, _, tune in sorted(candidates, key=lambda v: statistics.median(times[v[0]])):
        med = statistics.median(times[label])
        each = ", ".join(f"{t:.1f}" for t in times[label])
        print(f"| {label} | {tune} | {each} | {med:.1f} | {flop / med / 1e3:,.0f} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    main()
