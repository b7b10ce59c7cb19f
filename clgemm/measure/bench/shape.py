"""One shape of the bench: check every contender, then time the ones that passed together."""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Iterable, Sequence

from clgemm.backends import vendor_blas
from clgemm.configs.configuration import Trial, configure_all
from clgemm.configs.launch import packs_in_call
from clgemm.core.problem import Problem
from clgemm.library.gemm import choose_kernel
from clgemm.measure import references as refs
from clgemm.measure.bench.engine import MAX_REPEATS, TARGET_S, Contender, Timer, measure
from clgemm.measure.bench.sets import ROTATE_BYTES, input_sets, memory_problem
from clgemm.measure.bench.timers import (_never, _numpy_timer, _per_set, _rung_timer,
                                         _timing_label, _vendor_timer)
from clgemm.measure.rung_runner import RunResult, Workspace, run_rung
from clgemm.rungs import GEMM_RUNGS, get_rung

#: rungs measured by default (plus the one `gemm` would pick for the shape): the upper ladder and
#: the tiled kernels gemm() runs (12, 13)
DEFAULT_RUNGS = (6, 7, 8, 12, 13)


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
    try:
        pick = choose_kernel(device, p.m, p.n, p.k)
    except Exception:  # no rung fits the device at all: the rows will say why
        pick = None
    if rungs is not None:
        return list(rungs), pick
    numbers = set(DEFAULT_RUNGS)
    if pick is not None and pick.rung in GEMM_RUNGS:  # the direct kernel is measured apart
        numbers.add(pick.rung)
    return sorted(numbers), pick


#: a contender that passed its check: (key, timer maker for one input set, time estimate)
Passed = tuple[str, Callable[[Workspace], Timer], "float | None"]


def _check_rungs(backend: Any, device: Any, ws0: Workspace, rungs: Sequence[int] | None,
                 say: Callable[[str], None],
                 trial: Trial | None = None) -> tuple[list[dict], list[Passed]]:
    """Each candidate rung, configured as every tool configures it, run once and checked; one
    whose configuration failed `trial` (borrowed, tried in a child process) is not run here."""
    p = ws0.problem
    numbers, pick = _candidate_rungs(device, p, rungs)
    configs = configure_all(device, numbers, p.as_list())
    failed = trial(list(configs.values())) if trial is not None else {}
    rung_rows: list[dict] = []
    passed: list[Passed] = []
    for number in numbers:
        rung = get_rung(number)
        params, source = dict(configs[number].params), configs[number].source
        gemm_pick = bool(pick and pick.rung == number and dict(pick.params) == params)
        size_why = rung.size_problem(params, p.m, p.n, p.k)
        if size_why:  # the database had nothing usable for this shape and defaults cannot do it
            res = RunResult(number, rung.title, params, "unsupported-size", message=size_why)
        elif configs[number].key in failed:
            res = RunResult(number, rung.title, params, "trial-failed",
                            message=f"not run: its trial launch in a child process failed "
                                    f"({failed[configs[number].key]})")
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
            # a panels form's measured time holds its pack already
            helpers = 0 if packs_in_call(rung.helpers_for(params)) else res.helper_ms or 0
            passed.append((f"rung{number}",
                           functools.partial(_rung_timer, backend, rung=rung, params=params),
                           (res.ms or 0) + helpers))
    return rung_rows, passed


def _check_references(backend: Any, device: Any, ws0: Workspace,
                      say: Callable[[str], None]) -> tuple[list[dict], list[Passed]]:
    """The vendor library and NumPy, each run once and judged as a rung is."""
    say("check references")
    vendor = vendor_blas(backend.name).key
    checks = [(vendor, lambda: refs.vendor_reference(backend, ws0, 0, 1),
               lambda ws: _vendor_timer(backend, ws)),
              ("numpy", lambda: refs.numpy_reference(ws0, repeats=1), _numpy_timer)]
    ref_rows: list[dict] = []
    passed: list[Passed] = []
    for key, check_ref, maker in checks:
        ref = dict(check_ref(), key=key, repeats=0)
        if key == "numpy" and not device.is_cpu:
            ref["note"] = "; ".join(filter(None, [ref.get("note"),
                                                  "runs on the host CPU, not on the device"]))
        ref_rows.append(ref)
        if ref["status"] == "ok":
            passed.append((key, maker, ref.get("ms")))
    return ref_rows, passed


def _time(backend: Any, device: Any, p: Problem, ws0: Workspace, passed: list[Passed],
          row: dict, repeats: int | None, warmup: int, target_s: float, rotate_bytes: int,
          say: Callable[[str], None]) -> list[Contender]:
    """Everything that passed, timed in interleaved rounds over the shape's input sets."""
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

    return contenders


def bench_shape(backend: Any, device: Any, p: Problem, rungs: Sequence[int] | None = None,
                repeats: int | None = None, warmup: int = 1, target_s: float = TARGET_S,
                rotate_bytes: int = ROTATE_BYTES, progress: Callable[[str], None] | None = None,
                trial: Trial | None = None) -> dict:
    """Check and time every contender on one shape; the row for the table, JSON and CSV."""
    say = progress or (lambda msg: None)
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

    rung_rows, passed = _check_rungs(backend, device, ws0, rungs, say, trial)
    ref_rows, passed_refs = _check_references(backend, device, ws0, say)
    passed += passed_refs
    contenders = _time(backend, device, p, ws0, passed, row, repeats, warmup, target_s,
                       rotate_bytes, say)

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
