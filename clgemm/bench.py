"""`clgemm bench`: the best rung per problem shape against the device's vendor BLAS and NumPy.

For each shape the candidate rungs (by default 6-10 plus the rung that `gemm` itself would pick,
`api.choose_kernel`) run with their tuned parameters where the database has a usable entry
(`lookup.tuned_params`: the lookup chain's nearest stored shape whose size constraints hold here), else their
defaults; rungs 1-9 need tile-multiple sizes and are skipped, by name and reason, where their
parameters cannot do the shape (rung 10 does any size). The fastest correct rung is the "best
rung" and is compared with cuBLAS (CUDA devices), CLBlast (OpenCL devices) and NumPy's BLAS
(always; on a GPU that is the host CPU, a yardstick for the host and not a like-for-like rival).

Correctness. Every contender is checked once against the float64 product before it is timed:
rungs through `runner.run_rung` (output poisoned with NaN, one launch, relative error), the
libraries through their own judged rows in `references`. A wrong or failing contender is listed
with its status and never timed, so it can never be the best rung or a reference.

Timing. All contenders of a shape are measured side by side in one run, interleaved: warm-up
rounds first, then timed rounds in each of which every contender runs once, the order rotated by
one place per round (round r starts with contender r mod n), so slow drift (clocks, heat, a
neighbour's load) falls on all of them alike. The reported time is the median of a contender's
timed runs. Rungs are timed as the runner times them (device events per launch) and their time
*includes the transpose of B* that rungs 5-10 need, since the libraries do the whole product
from the same column-major A and B; the kernel and helper parts are in the JSON. CLBlast and
cuBLAS are timed as in `references` (a marker to CLBlast's last event, CUDA events around
cublasSgemm); NumPy by host wall time, writing into a C allocated once (`matmul(..., out=)`), as
every contender writes into a C of its own that was allocated and written before timing starts
(so no timed call pays for first-touch page faults, which PoCL's lazily mapped buffers and a
fresh NumPy result would otherwise add).

Repeats adapt: without --repeats each contender gets about TARGET_S of timed work (its warm-up
time decides how many runs that is), at least MIN_REPEATS and at most MAX_REPEATS; contenders
that need more runs than the slowest carry on in further rounds among themselves, still
rotated. --repeats R makes it exactly R for every contender.

Caches. A rung's own timing (the ladder's, the tuner's) re-launches on the same buffers, so at
small sizes A, B and C sit in the last-level cache (an H100's L2 holds 50 MB, the L3 of the
CPU here 32 MB) from the second launch on: that times a warm cache a real caller rarely has, and
favours whoever runs right after a contender that read the same inputs. So below ROTATE_BYTES
(64 MiB) of A+B+C the bench makes several input sets, enough that between two uses of one set
at least ROTATE_BYTES of other inputs are read (at most MAX_SETS, and no more than a quarter of
device memory), and every timed call, whichever contender makes it, takes the next set in turn.
Only the first set is checked against float64: the kernels are the same on all of them. Above
ROTATE_BYTES one set is used; such inputs mostly cannot stay cached between calls anyway. A
consequence: at small sizes the bench's GFLOP/s can be lower than the ladder's or the tuning
database's for the same configuration, which were measured warm.

Memory. A shape whose buffers exceed the device's largest allocation, its memory, the 32-bit
indexing of the kernels, or the host's available memory (the float64 reference lives there) is
skipped with a note; so is one whose allocation fails.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import math
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import click

from . import lookup
from . import references as refs
from .errors import UsageError
from .hardware import Hardware, hardware_for_device
from .memory import HOST_SHARE, INT_MAX, checking_bytes, host_available
from .model_cli import bound_options, hardware_from_options
from .paths import check_writable, write_output
from .rungs import REGISTRY, get_rung, parse_rungs
from .runner import (Problem, RunResult, Workspace, kernel_source, parse_sizes, run_helpers,
                     run_rung)

#: rungs measured by default (plus the one `gemm` would pick for the shape)
DEFAULT_RUNGS = (6, 7, 8, 9, 10)
#: timed work each contender gets when --repeats is not given (seconds)
TARGET_S = 1.0
MIN_REPEATS = 3
MAX_REPEATS = {"CPU": 20, "GPU": 50}
#: below this many bytes of A+B+C, inputs rotate among several sets (see the module docstring)
ROTATE_BYTES = 64 * 2**20
MAX_SETS = 128
#: reference keys (JSON, CSV) per backend; NumPy's is always there
VENDOR_KEY = {"opencl": "clblast", "cuda": "cublas"}
REF_LABEL = {"clblast": "CLBlast", "cublas": "cuBLAS", "numpy": "NumPy"}



# -- sizes ---------------------------------------------------------------------------------------
def _bench_calls(dev: Any, sizes: str | None, arrays: str | None, clblast_file: str | None,
                 json_file: str | None, command: str) -> None:
    """`bench --call`: callbench's engine, its table, its JSON."""
    from . import api, callbench

    clblast = callbench.read_clblast_params(clblast_file) if clblast_file else None
    mode = arrays or ("numpy" if dev.is_cpu else "device")
    shapes = ([(p.m, p.n, p.k) for p in parse_sizes(sizes)] if sizes else
              list(callbench.CPU_SHAPES if dev.is_cpu else callbench.GPU_SHAPES))
    backend = api.backend_for(dev)
    click.echo(f"bench --call on device {dev.index}: {dev.name} ({dev.backend}), "
               f"{len(shapes)} shapes, {mode} arrays", err=True)
    rows = callbench.run_bench(backend, shapes, mode, clblast[0] if clblast else None,
                               progress=lambda msg: click.echo(f"  {msg}", err=True))
    data = callbench.to_json(backend, rows, command, mode, clblast)
    click.echo(callbench.table(data))
    if json_file:
        write_output(json_file, json.dumps(data, indent=2, allow_nan=False) + "\n")
        click.echo(f"wrote {json_file}", err=True)


def default_sizes(device: Any) -> list[Problem]:
    """Square powers of two, non-tile sizes, and LU-shaped trailing updates N x BS . BS x N
    (M = N, K = BS, as in Li, Dongarra and Tomov's GEMM study); smaller sets on a CPU."""
    if device.is_cpu:
        squares, odd, lu_n, lu_bs = (256, 512, 1024, 2048), (1000, 1023), (1024, 2048), (64, 256)
    else:
        squares = (256, 512, 1024, 2048, 4096, 8192)
        odd, lu_n, lu_bs = (1000, 1023, 2049, 4097), (4096, 8192), (64, 128, 256)
    out = [Problem(s, s, s) for s in (*squares, *odd)]
    out += [Problem(n, n, bs) for n in lu_n for bs in lu_bs]
    return out


def shape_text(p: Problem) -> str:
    return f"{p.m}x{p.n}x{p.k}"


# -- interleaved measurement -----------------------------------------------------------------
#: one timed call on input set `i`: its total ms, or the parts that add up to it
Timer = Callable[[int], "float | tuple[float, ...]"]


@dataclass
class Contender:
    """Something timed in the interleaved rounds: a checked rung or a checked library."""

    key: str
    timer: Timer
    estimate_ms: float | None = None  # from the check or the last warm-up run
    repeats: int = 0
    times: list[float] = field(default_factory=list)
    parts: list[tuple[float, ...]] = field(default_factory=list)
    error: str = ""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    def median_part(self, i: int) -> float | None:
        vals = [p[i] for p in self.parts if len(p) > i]
        return statistics.median(vals) if vals else None


def rotated(items: Sequence, r: int) -> list:
    """Round r's order: the list rotated left by r places."""
    if not items:
        return []
    s = r % len(items)
    return list(items[s:]) + list(items[:s])


def planned_repeats(estimate_ms: float | None, target_s: float, cap: int) -> int:
    if not estimate_ms or estimate_ms <= 0:
        return cap
    return max(MIN_REPEATS, min(cap, int(target_s * 1e3 / estimate_ms)))


def measure(contenders: Sequence[Contender], *, warmup: int, repeats: int | None, sets: int = 1,
            target_s: float = TARGET_S, cap: int = MAX_REPEATS["GPU"]) -> None:
    """Warm-up rounds, then timed rounds; each round runs every live contender once, in the
    order rotated by the round number (counted on from the warm-up rounds). Each call takes
    the next input set (0, 1, ..., sets-1, 0, ...), so no call finds the set it reads still
    cached from the call before it. A contender whose call raises is dropped with its error."""
    counter = [0]

    def call(c: Contender) -> tuple[float, ...] | None:
        s = counter[0] % max(1, sets)
        counter[0] += 1
        try:
            out = c.timer(s)
        except Exception as exc:  # a failure is that contender's result, not the bench's end
            c.error = f"{type(exc).__name__}: {exc}"
            return None
        return tuple(out) if isinstance(out, (tuple, list)) else (float(out),)

    for r in range(warmup):
        for c in rotated(contenders, r):
            if not c.error and (parts := call(c)) is not None:
                c.estimate_ms = sum(parts)
    for c in contenders:
        c.repeats = repeats if repeats is not None else planned_repeats(c.estimate_ms,
                                                                        target_s, cap)
    rounds = max((c.repeats for c in contenders), default=0)
    for r in range(warmup, warmup + rounds):  # the rotation goes on from the warm-up rounds
        for c in rotated(contenders, r):
            if c.error or len(c.times) >= c.repeats:
                continue
            parts = call(c)
            if parts is not None:
                c.times.append(sum(parts))
                c.parts.append(parts)


# -- timers on one input set -------------------------------------------------------------------
def _rung_timer(backend: Any, ws: Workspace, rung: Any, params: dict) -> Timer:
    """Helper launches then the rung's launch, assembled as `runner.run_rung` assembles them
    (builds are cached per backend, so nothing compiles again). Returns (kernel, helpers) ms."""
    p = ws.problem
    helpers, a_buf, b_buf = run_helpers(backend, ws, rung.helpers_for(params))
    knl = backend.build(kernel_source(backend, rung.file), rung.macros(params), rung.kernel)
    gsize, lsize = rung.geometry(params, p.m, p.n)
    args = [p.m, p.n, p.k, a_buf, b_buf, ws.buf_c]
    for launch in helpers:  # writes the helper's buffers once: no first touch while timed
        launch()

    def timed(_: int) -> tuple[float, ...]:
        if not helpers:
            return (backend.launch(knl, gsize, lsize, args),)
        h = sum(launch() for launch in helpers)
        return backend.launch(knl, gsize, lsize, args), h

    return timed


def _numpy_timer(ws: Workspace) -> Timer:
    """A @ B into a C allocated (and touched) once, as the rungs write into theirs; a fresh
    `a @ b` would also time the allocation and first touch of C."""
    import numpy as np

    a, b = ws.a, ws.b
    out = np.zeros((ws.problem.m, ws.problem.n), dtype=np.float32)

    def timed(_: int) -> float:
        t0 = time.perf_counter()
        np.matmul(a, b, out=out)
        return (time.perf_counter() - t0) * 1e3

    return timed


def _clblast_timer(backend: Any, ws: Workspace) -> Timer:
    """CLBlastSgemm timed as `references.clblast_reference` times it: from a marker queued just
    before the call to the end of the last event CLBlast returns (host wall time where the
    device cannot time markers)."""
    lib, why = refs.load_clblast()
    if lib is None:
        raise RuntimeError(why)
    p = ws.problem
    queue = backend.queue
    out = ws.scratch("clblast C", p.m * p.n)
    backend.fill(out, 0.0, p.m * p.n)  # first touch (PoCL maps pages lazily) before timing
    call = refs.clblast_call(lib, queue, ws, out)

    def timed(_: int) -> float:
        return call()

    timed.timing = call.timing  # type: ignore[attr-defined]
    return timed


def _cublas_timer(backend: Any, ws: Workspace) -> Timer:
    """cublasSgemm in the default (FP32, no TF32) math mode, CUDA events around it."""
    import cupy
    import numpy as np
    from cupy_backends.cuda.libs import cublas

    p = ws.problem
    out = ws.scratch("cublas C", p.m * p.n)
    backend.fill(out, 0.0, p.m * p.n)
    alpha, beta = np.ones(1, np.float32), np.zeros(1, np.float32)
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    if cublas.getMathMode(handle) != cublas.CUBLAS_DEFAULT_MATH:
        cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)

    def timed(_: int) -> float:
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, p.m, p.n, p.k,
                     alpha.ctypes.data, ws.buf_a.data.ptr, p.m, ws.buf_b.data.ptr, p.k,
                     beta.ctypes.data, out.data.ptr, p.m)
        end.record()
        end.synchronize()
        return float(cupy.cuda.get_elapsed_time(start, end))

    return timed


VENDOR_TIMER = {"clblast": _clblast_timer, "cublas": _cublas_timer}


def _per_set(make: Callable[[Workspace], Timer], sets: list[Workspace]) -> Timer:
    """One timer over all input sets: call i runs on set i. All are made before timing starts,
    so every buffer is allocated and written once outside the timed calls."""
    made = [make(ws) for ws in sets]

    def timed(i: int):
        return made[i](i)

    timed.made = made  # type: ignore[attr-defined]
    return timed


def _never(_: int) -> float:
    raise RuntimeError("not prepared")


def _timing_label(timer: Timer) -> str | None:
    """How a library contender was timed in the end ("host wall time" once any call fell back
    to it), or None where its timers do not say."""
    labels = {t.timing["label"] for t in getattr(timer, "made", []) if hasattr(t, "timing")}
    if not labels:
        return None
    return "host wall time" if "host wall time" in labels else labels.pop()


# -- memory ------------------------------------------------------------------------------------
def _bytes_text(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def device_bytes_per_set(p: Problem) -> int:
    """A, B, C, the transposed B of rungs 5-10 and the library's own C."""
    return 4 * (p.m * p.k + 2 * p.k * p.n + 2 * p.m * p.n)


def memory_problem(device: Any, p: Problem) -> str | None:
    """Why this shape cannot be benchmarked on this device and host, or None."""
    buffers = {"A": p.m * p.k, "B": p.k * p.n, "C": p.m * p.n}
    for name, count in buffers.items():
        if count > INT_MAX:
            return (f"{name} has {count} elements, more than the kernels' 32-bit indexing "
                    f"reaches ({INT_MAX})")
        if 4 * count > device.max_alloc_bytes:
            return (f"{name} needs {_bytes_text(4 * count)} in one buffer; the device allows "
                    f"{_bytes_text(device.max_alloc_bytes)} per allocation")
    need = device_bytes_per_set(p)
    if need > 0.9 * device.global_mem_bytes:
        return (f"needs {_bytes_text(need)} of device memory; the device has "
                f"{_bytes_text(device.global_mem_bytes)}")
    host = checking_bytes(p.m, p.n, p.k)
    avail = host_available()
    if avail is not None and host > HOST_SHARE * avail:
        return (f"checking it needs about {_bytes_text(host)} of host memory; "
                f"{_bytes_text(avail)} is available")
    return None


def input_sets(p: Problem, device: Any, rotate_bytes: int = ROTATE_BYTES) -> int:
    """How many input sets to rotate among: enough that between two uses of one set at least
    `rotate_bytes` of other A+B+C is read, within MAX_SETS and a quarter of device memory."""
    footprint = 4 * (p.m * p.k + p.k * p.n + p.m * p.n)
    if footprint >= rotate_bytes:
        return 1
    n = math.ceil(rotate_bytes / footprint) + 1
    fits = max(1, int(0.25 * device.global_mem_bytes // device_bytes_per_set(p)))
    return max(1, min(n, MAX_SETS, fits))


def _release_memory(backend: Any) -> None:
    gc.collect()
    if backend.name == "cuda":
        try:
            import cupy
            cupy.get_default_memory_pool().free_all_blocks()
        except Exception:  # pragma: no cover - nothing to free is fine
            pass


# -- one shape ---------------------------------------------------------------------------------
def _clean(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def pick_best(rows: Iterable[dict]) -> dict | None:
    """The fastest rung row that was checked correct and timed; wrong ones never qualify."""
    ok = [r for r in rows if r.get("status") == "ok" and r.get("gflops")]
    return max(ok, key=lambda r: r["gflops"], default=None)


def _candidate_rungs(device: Any, p: Problem, rungs: Sequence[int] | None) -> tuple[list[int], Any]:
    """The rungs to measure and `gemm`'s own choice for the shape (api.choose_kernel)."""
    from .api import choose_kernel

    try:
        pick = choose_kernel(device, p.m, p.n, p.k)
    except Exception:  # no rung fits the device at all: the rows will say why
        pick = None
    if rungs is not None:
        return list(rungs), pick
    numbers = set(DEFAULT_RUNGS)
    if pick is not None and pick.rung in REGISTRY:  # the direct kernel is measured apart
        numbers.add(pick.rung)
    return sorted(numbers), pick


def bench_shape(backend: Any, device: Any, p: Problem, rungs: Sequence[int] | None = None,
                repeats: int | None = None, warmup: int = 1, target_s: float = TARGET_S,
                rotate_bytes: int = ROTATE_BYTES, progress: Callable[[str], None] | None = None
                ) -> dict:
    """Check and time every contender on one shape; the row for the table, JSON and CSV."""
    say = progress or (lambda msg: None)
    vendor = VENDOR_KEY.get(backend.name)
    row: dict[str, Any] = {"shape": p.as_list(), "status": "ok", "note": "", "input_sets": 0,
                           "best": None, "rungs": [], "references": [], "ratios": {}}
    why = memory_problem(device, p)
    if why:
        row.update(status="skipped", note=why)
        return row
    try:
        ws0 = Workspace(backend, p, seed=0)
    except Exception as exc:  # out of memory and the like: a note, not a crash
        row.update(status="skipped", note=f"cannot allocate the inputs: {type(exc).__name__}: "
                                          f"{exc}")
        return row

    numbers, pick = _candidate_rungs(device, p, rungs)
    found = lookup.tuned_params(device, numbers, p.as_list())
    rung_rows: list[dict] = []
    #: what passed its check: (key, timer maker for one input set, time estimate)
    passed: list[tuple[str, Callable[[Workspace], Timer], float | None]] = []
    for number in numbers:
        rung = get_rung(number)
        params = dict(found[number].params if number in found else rung.defaults())
        source = found[number].label if number in found else "default"
        gemm_pick = bool(pick and pick.rung == number and dict(pick.params) == params)
        size_why = rung.size_problem(params, p.m, p.n, p.k)
        if size_why:  # the database had nothing usable for this shape and defaults cannot do it
            res = RunResult(number, rung.title, params, "unsupported-size", message=size_why)
        else:
            say(f"check rung {number} ({source}) {rung.params_text(params)}")
            try:
                res = run_rung(backend, ws0, rung, params, repeats=1, warmup=0)
            except Exception as exc:  # e.g. a helper's buffer not allocated: this rung's failure
                res = RunResult(number, rung.title, params, "failed",
                                message=f"{type(exc).__name__}: {exc}")
        d = res.to_json()
        d.update(source=source, gemm_pick=gemm_pick, kernel_ms=None, repeats=0)
        rung_rows.append(d)
        if res.ok:
            passed.append((f"rung{number}", lambda ws, rung=rung, params=params:
                           _rung_timer(backend, ws, rung, params),
                           (res.ms or 0) + (res.helper_ms or 0)))

    ref_rows: list[dict] = []
    say("check references")
    checks = [("numpy", lambda: refs.numpy_reference(ws0, repeats=1), _numpy_timer)]
    if vendor:
        checks.insert(0, (vendor, lambda: refs.VENDOR[backend.name](backend, ws0, 0, 1),
                          lambda ws: VENDOR_TIMER[vendor](backend, ws)))
    for key, check_ref, maker in checks:
        ref = dict(check_ref(), key=key, repeats=0)
        if key == "numpy" and not device.is_cpu:
            ref["note"] = "; ".join(filter(None, [ref.get("note"),
                                                  "runs on the host CPU, not on the device"]))
        ref_rows.append(ref)
        if ref["status"] == "ok":
            passed.append((key, maker, ref.get("ms")))

    sets = [ws0]
    wanted = input_sets(p, device, rotate_bytes) if passed else 1
    try:
        for s in range(1, wanted):
            sets.append(Workspace(backend, p, seed=s))
    except Exception as exc:
        row["note"] = f"only {len(sets)} input sets ({type(exc).__name__} making more)"
    row["input_sets"] = len(sets)
    for ws in sets:  # first touch of C outside the timed calls
        backend.fill(ws.buf_c, 0.0, p.m * p.n)
    contenders = []
    for key, maker, est in passed:
        c = Contender(key, _never, estimate_ms=est)
        try:
            c.timer = _per_set(maker, sets)
        except Exception as exc:  # e.g. no memory for its buffers on every set
            c.error = f"preparing the input sets: {type(exc).__name__}: {exc}"
        contenders.append(c)

    cap = MAX_REPEATS["CPU" if device.is_cpu else "GPU"]
    say(f"time {len(contenders)} contenders interleaved on {len(sets)} input set"
        f"{'s' if len(sets) > 1 else ''}")
    measure(contenders, warmup=warmup, repeats=repeats, sets=len(sets), target_s=target_s,
            cap=cap)

    by_key = {c.key: c for c in contenders}
    for d in rung_rows:
        c = by_key.get(f"rung{d['rung']}")
        if c is None:
            continue
        _fill_timing(d, c, p)
        d["kernel_ms"], d["helper_ms"] = c.median_part(0), c.median_part(1)
    for d in ref_rows:
        c = by_key.get(d["key"])
        if c is not None:
            _fill_timing(d, c, p)
            d["timing"] = _timing_label(c.timer) or d.get("timing", "")
    best = pick_best(rung_rows)
    if best is None:
        row.update(status="no-rung", note=row["note"] or "no candidate rung ran correctly on "
                                                         "this shape")
    row["best"] = best
    row["rungs"] = rung_rows
    row["references"] = ref_rows
    for ref in ref_rows:
        if best and ref["status"] == "ok" and ref.get("gflops"):
            row["ratios"][ref["key"]] = best["gflops"] / ref["gflops"]
    return row


def _fill_timing(d: dict, c: Contender, p: Problem) -> None:
    d["repeats"] = len(c.times)
    d["times_ms"] = list(c.times)
    if c.error:
        d["status"], d["ms"], d["gflops"] = "failed", None, None
        key = "message" if "message" in d else "note"
        d[key] = f"failed while timing: {c.error}"
        return
    d["ms"] = c.median_ms
    d["gflops"] = p.gflops(d["ms"])


# -- the whole run -----------------------------------------------------------------------------
@dataclass
class BenchRun:
    device: Any
    rows: list[dict]
    settings: dict
    command: str = ""
    #: figures of the performance bound, None where none was computed
    hardware: Hardware | None = None

    @property
    def ref_keys(self) -> list[str]:
        vendor = VENDOR_KEY.get(self.device.backend)
        return ([vendor] if vendor else []) + ["numpy"]

    def to_json(self) -> dict:
        from .ladder import provenance

        hw = self.hardware.to_json() if self.hardware else None
        return _scrub({"format": "clgemm-bench", "device": self.device.to_json(),
                       "settings": self.settings, "provenance": provenance(self.command),
                       "bound_hardware": hw, "rows": self.rows})

    def csv_rows(self) -> list[dict]:
        out = []
        for r in self.rows:
            best = r.get("best") or {}
            flat = {"m": r["shape"][0], "n": r["shape"][1], "k": r["shape"][2],
                    "status": r["status"], "note": r["note"], "input_sets": r["input_sets"],
                    "best_rung": best.get("rung"), "best_title": best.get("name"),
                    "best_params": " ".join(f"{k}={v}" for k, v in best.get("params", {}).items()),
                    "best_source": best.get("source"), "best_gemm_pick": best.get("gemm_pick"),
                    "best_ms": best.get("ms"), "best_kernel_ms": best.get("kernel_ms"),
                    "best_helper_ms": best.get("helper_ms"), "best_gflops": best.get("gflops"),
                    "best_rel_error": best.get("rel_error"), "best_repeats": best.get("repeats"),
                    "best_bound_gflops": (r.get("bound") or {}).get("gflops"),
                    "best_pct_of_bound": (r.get("bound") or {}).get("pct"),
                    "best_bound_limit": (r.get("bound") or {}).get("limit")}
            refs_by_key = {ref["key"]: ref for ref in r.get("references", [])}
            for key in self.ref_keys:
                ref = refs_by_key.get(key, {})
                flat[f"{key}_status"] = ref.get("status")
                flat[f"{key}_ms"] = ref.get("ms")
                flat[f"{key}_gflops"] = ref.get("gflops")
                flat[f"ratio_{key}"] = r.get("ratios", {}).get(key)
            out.append({k: ("" if v is None else v) for k, v in flat.items()})
        return out

    def csv_text(self) -> str:
        rows = self.csv_rows()
        if not rows:
            return ""
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue()

    def table(self) -> str:
        from tabulate import tabulate

        def num(x, fmt):
            return "" if x is None else format(x, fmt)

        host = "" if self.device.is_cpu else " (host)"
        headers = ["shape", "best rung", "parameters", "config", "ms", "GFLOP/s", "bound",
                   "% bound"]
        for key in self.ref_keys:
            label = REF_LABEL[key] + (host if key == "numpy" else "")
            headers += [f"{label} GFLOP/s", f"x {REF_LABEL[key]}"]
        headers.append("notes")
        body = []
        for r in self.rows:
            best = r.get("best") or {}
            config = best.get("source", "")
            if best.get("gemm_pick"):
                config += ", gemm's pick"
            line = [shape_text(Problem(*r["shape"])),
                    f"{best['rung']} {best['name']}" if best else "",
                    " ".join(f"{k}={v}" for k, v in best.get("params", {}).items()), config,
                    num(best.get("ms"), ".3f"), num(best.get("gflops"), ".1f"),
                    num((r.get("bound") or {}).get("gflops"), ".1f"),
                    num((r.get("bound") or {}).get("pct"), ".1f")]
            refs_by_key = {ref["key"]: ref for ref in r.get("references", [])}
            for key in self.ref_keys:
                ref = refs_by_key.get(key, {})
                line += [num(ref.get("gflops"), ".1f") or ref.get("status", ""),
                         num(r.get("ratios", {}).get(key), ".2f")]
            line.append(_notes(r))
            body.append(line)
        d = self.device
        head = f"{d.name} ({d.backend}, {d.platform}, driver {d.driver_version})"
        foot = ["x REF: the best rung's GFLOP/s over REF's (above 1: the rung is faster). Rung "
                "times include the transpose of B; all contenders timed interleaved, median."]
        if not d.is_cpu:
            foot.append("NumPy runs on the host CPU, not on the device.")
        rotated_rows = [r for r in self.rows if r.get("input_sets", 0) > 1]
        if rotated_rows:
            foot.append(f"Below {ROTATE_BYTES // 2**20} MiB of A+B+C the inputs rotate among "
                        f"several sets, so no call reads a cache warmed by the call before it.")
        if self.hardware:
            foot.append("bound: the best rung's upper bound from the performance model, with the "
                        "transpose of B's DRAM traffic in the time as in the rung's; device "
                        "figures:")
            foot += self.hardware.summary()
            by_limit: dict[str, list[str]] = {}
            for r in self.rows:
                if r.get("bound"):
                    by_limit.setdefault(r["bound"]["limit"], []).append(
                        shape_text(Problem(*r["shape"])))
            foot += [f"  limited by {limit}: {', '.join(shapes)}"
                     for limit, shapes in by_limit.items()]
        table = tabulate(body, headers=headers, disable_numparse=True)
        return "\n".join([head, table, *foot])


def _notes(row: dict) -> str:
    parts = [row["note"]] if row.get("note") else []
    for d in row.get("rungs", []):
        if d["status"] not in ("ok", "unsupported-size"):
            parts.append(f"rung {d['rung']} {d['status']}")
    for ref in row.get("references", []):
        if ref["status"] not in ("ok",):
            parts.append(f"{REF_LABEL.get(ref['key'], ref['key'])} {ref['status']}")
    return "; ".join(parts)


def _scrub(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _scrub(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_scrub(v) for v in x]
    return _clean(x)


def add_bound(row: dict, hardware: Hardware) -> None:
    """The best rung's performance bound on the row's shape (model.py), on the same footing as
    its time: the transpose of B's DRAM traffic included."""
    from .model import bound_for

    best = row.get("best")
    if not best or not best.get("gflops"):
        return
    b = bound_for(get_rung(best["rung"]), best["params"], Problem(*row["shape"]), hardware)
    if b is None:
        return
    row["bound"] = {"gflops": b.gflops_with_helpers(), "kernel_gflops": b.gflops,
                    "pct": b.percent(best["gflops"], helpers=True), "limit": b.limit,
                    "why": b.term(b.limit).detail}


def run_bench(device: Any, problems: Sequence[Problem], rungs: Sequence[int] | None = None,
              repeats: int | None = None, warmup: int | None = None, target_s: float = TARGET_S,
              rotate_bytes: int = ROTATE_BYTES, command: str = "",
              progress: Callable[[str], None] | None = None,
              hardware: Hardware | None = None) -> BenchRun:
    """Every shape in turn on one backend of the device; `hardware` (by default the device's
    figures) gives each shape's best rung its performance bound."""
    hardware = hardware or hardware_for_device(device)
    from .backends import open_backend
    from .database import load
    from .ladder import default_repeats

    warmup = default_repeats(device)[0] if warmup is None else warmup
    load(device)  # a tuning database that cannot be read is refused now, not at the nth shape
    backend = open_backend(device)
    rows = []
    try:
        for i, p in enumerate(problems, 1):
            def say(msg: str, i=i, p=p) -> None:
                if progress:
                    progress(f"[{i}/{len(problems)}] {shape_text(p)}: {msg}")

            row = bench_shape(backend, device, p, rungs, repeats=repeats, warmup=warmup,
                              target_s=target_s, rotate_bytes=rotate_bytes, progress=say)
            if row["status"] == "skipped":
                say(f"skipped: {row['note']}")
            add_bound(row, hardware)
            rows.append(row)
            _release_memory(backend)  # the shape's buffers, before the next one allocates
    finally:
        backend.release()
    settings = {"rungs": list(rungs) if rungs is not None else None,
                "default_rungs": list(DEFAULT_RUNGS), "warmup": warmup,
                "repeats": repeats, "adaptive_repeats": repeats is None,
                "target_s": target_s, "min_repeats": MIN_REPEATS,
                "max_repeats": MAX_REPEATS["CPU" if device.is_cpu else "GPU"],
                "rotate_bytes": rotate_bytes, "max_sets": MAX_SETS,
                "rung_time": "kernel + transpose of B (device events)"}
    return BenchRun(device, rows, settings, command, hardware)


# -- the command -------------------------------------------------------------------------------
@click.command()
@click.option("--device", "-d", default=None,
              help="device index (see 'clgemm devices') or a case-insensitive part of its name")
@click.option("--backend", "-b", type=click.Choice(["opencl", "cuda"]), default=None,
              help="only this backend's devices (an NVIDIA GPU is listed by both)")
@click.option("--sizes", default=None,
              help="comma list of S (square) or MxNxK, e.g. 1024,1000,4096x4096x128 (default: "
                   "a set for the device type)")
@click.option("--rungs", "-r", default=None,
              help="rungs to measure, e.g. 6-10 (default: 6-10 plus gemm's own pick)")
@click.option("--repeats", type=int, default=None,
              help=f"timed runs per contender (default: adaptive, about {TARGET_S:g} s of "
                   f"timed work each, {MIN_REPEATS} to {MAX_REPEATS['CPU']} on a CPU, "
                   f"{MIN_REPEATS} to {MAX_REPEATS['GPU']} on a GPU)")
@click.option("--warmup", type=int, default=None, help="untimed rounds before timing")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), default=None,
              help="also write the results as JSON to this file")
@click.option("--csv", "csv_file", type=click.Path(dir_okay=False), default=None,
              help="also write one CSV row per shape to this file")
@click.option("--call", "call_mode", is_flag=True,
              help="time what a user calls: gemm() end to end beside cuBLAS's and CLBlast's "
                   "own calls, with the chosen kernel's time and the overhead")
@click.option("--arrays", type=click.Choice(["device", "numpy"]), default=None,
              help="with --call: device arrays in and out (default on GPUs) or NumPy arrays "
                   "(default on CPUs)")
@click.option("--clblast-params", "clblast_file", type=click.Path(dir_okay=False), default=None,
              help="with --call: a JSON file of CLBlast Xgemm parameters tuned for the device "
                   "(its tuner's result), measured as 'CLBlast (tuned)'")
@bound_options
def bench(device, backend, sizes, rungs, repeats, warmup, json_file, csv_file, call_mode,
          arrays, clblast_file, peak_gflops, local_gbps, mem_gbps) -> None:
    """The best rung per shape against cuBLAS/CLBlast and NumPy, measured side by side; with
    --call, gemm() end to end against the libraries' own calls."""
    from .cli import _command_line
    from .devices import select_device

    if call_mode:
        for option, path in (("--json", json_file), ("--csv", csv_file)):
            if path:
                check_writable(option, path)
        _bench_calls(select_device(device, backend=backend), sizes, arrays, clblast_file,
                     json_file, _command_line())
        return

    if repeats is not None and repeats < 1:
        raise UsageError(f"--repeats {repeats}: must be positive")
    if warmup is not None and warmup < 0:
        raise UsageError(f"--warmup {warmup}: must be >= 0")
    for option, path in (("--json", json_file), ("--csv", csv_file)):
        if path:
            check_writable(option, path)
    problems = parse_sizes(sizes) if sizes is not None else None
    numbers = parse_rungs(rungs) if rungs is not None else None
    dev = select_device(device, backend=backend)
    hardware = hardware_from_options(dev, peak_gflops, local_gbps, mem_gbps)
    problems = problems or default_sizes(dev)
    click.echo(f"bench on device {dev.index}: {dev.name} ({dev.backend}), "
               f"{len(problems)} shapes", err=True)
    run = run_bench(dev, problems, numbers, repeats=repeats, warmup=warmup,
                    command=_command_line(), progress=lambda msg: click.echo(f"  {msg}", err=True),
                    hardware=hardware)
    click.echo(run.table())
    if json_file:
        write_output(json_file, json.dumps(run.to_json(), indent=2, allow_nan=False) + "\n")
        click.echo(f"wrote {json_file}", err=True)
    if csv_file:
        write_output(csv_file, run.csv_text())
        click.echo(f"wrote {csv_file}", err=True)
