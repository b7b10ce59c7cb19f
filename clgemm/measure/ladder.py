"""The ladder: every selected rung on one device and one problem, plus reference rows."""

from __future__ import annotations

import datetime as _dt
import math
import platform as _platform
import sys
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from clgemm.backends import open_backend, versions
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.core.version import __version__
from clgemm.devices.hardware import Hardware, hardware_for_device
from clgemm.devices.info import DeviceInfo
from clgemm.measure.references import baseline, collect_references, percent_of
from clgemm.measure.rung_runner import RunResult, Workspace, check_workspace, run_rung
from clgemm.model.bound import Bound, bound_for
from clgemm.rungs import get_rung

#: the "format" of what `clgemm ladder --json` writes, and of `--vs-defaults`
FORMAT = "clgemm-ladder"
VS_DEFAULTS_FORMAT = "clgemm-ladder-vs-defaults"


#: the square size the ladder runs by default, by device type: it runs the whole ladder quickly
#: yet fills the device (the naive rung takes a fraction of a second on a CPU at 512)
DEFAULT_SIZE = {"CPU": 512, "GPU": 4096}
#: (warm-up, timed) launches per rung by default, by device type: fewer on a CPU, where one
#: launch already lasts milliseconds
DEFAULT_REPEATS = {"CPU": (1, 3), "GPU": (3, 10)}


def default_size(device: DeviceInfo) -> int:
    return DEFAULT_SIZE["CPU" if device.is_cpu else "GPU"]


def default_repeats(device: DeviceInfo) -> tuple[int, int]:
    """(warm-up, repeats)."""
    return DEFAULT_REPEATS["CPU" if device.is_cpu else "GPU"]


def size_needs(multiples: tuple[int, int, int]) -> str:
    """What a rung's tiles ask of the sizes, from `Rung.size_multiples`: 'M and N multiples of
    128, K of 16'; 'any size' where they ask nothing."""
    groups: dict[int, list[str]] = {}
    for dim, mult in zip("MNK", multiples):
        if mult > 1:
            groups.setdefault(mult, []).append(dim)
    parts: list[str] = []
    for mult, dims in groups.items():
        names = dims[0] if len(dims) == 1 else ", ".join(dims[:-1]) + " and " + dims[-1]
        if not parts:
            parts.append(f"{names} {'a multiple' if len(dims) == 1 else 'multiples'} of {mult}")
        else:
            parts.append(f"{names} of {mult}")
    return ", ".join(parts) or "any size"


#: configurations per rung at a problem (how the command resolves them); UsageError: none there
ConfigsAt = Callable[[Problem], Mapping[int, Mapping[str, int]]]


def _runs_all(configs_at: ConfigsAt, p: Problem) -> bool:
    try:
        configs = configs_at(p)
    except UsageError:
        return False
    return all(get_rung(n).size_problem(dict(params), p.m, p.n, p.k) is None
               for n, params in configs.items())


def _near(value: int, step: int) -> list[int]:
    """Multiples of `step` around `value`, nearest first (a tie goes to the larger)."""
    j = max(1, round(value / step))
    return sorted({step * i for i in range(max(1, j - 2), j + 3)},
                  key=lambda x: (abs(x - value), -x))


def nearest_size(problem: Problem, configs_at: ConfigsAt, tries: int = 8) -> Problem | None:
    """The problem nearest to `problem` (square where it is square) at which every rung's
    configuration there divides M, N and K, so no rung is left out for its size; None where
    every rung runs already or none is found near it. The configurations come from
    `configs_at`, since the lookup chain may choose other tiles at another size."""
    if _runs_all(configs_at, problem):
        return None
    try:
        here = configs_at(problem)
    except UsageError:
        return None
    steps = []
    for found in (here, {n: get_rung(n).defaults() for n in here}):
        mults = [get_rung(n).size_multiples(dict(params)) for n, params in found.items()]
        steps.append([math.lcm(*(m[d] for m in mults)) for d in range(3)])
    sizes = (problem.m, problem.n, problem.k)
    if problem.m == problem.n == problem.k:
        candidates = [Problem(s, s, s) for step in steps for s in _near(problem.m, math.lcm(*step))]
    else:
        candidates = [Problem(m, n, k) for step in steps
                      for m in _near(sizes[0], step[0])[:2] for n in _near(sizes[1], step[1])[:2]
                      for k in _near(sizes[2], step[2])[:2]]
    seen: set[tuple[int, int, int]] = set()
    ordered = []
    for c in sorted(candidates, key=lambda c: sum(abs(a - b) for a, b in zip(c.as_list(), sizes))):
        if c.as_tuple() not in seen:
            seen.add(c.as_tuple())
            ordered.append(c)
    return next((c for c in ordered[:tries] if _runs_all(configs_at, c)), None)


@dataclass
class LadderRun:
    device: DeviceInfo
    problem: Problem
    rows: list[RunResult]
    references: list[dict]
    sources: dict[int, str]
    command: str
    #: figures for the performance bound (clgemm/model/bound.py); None: the device's own, from the table
    hardware: Hardware | None = None
    #: where some rungs could not run at this size: the nearest at which all would
    #: (`nearest_size`)
    runs_all_at: Problem | None = None
    #: rungs whose borrowed configuration failed its trial launch in a child process, and why:
    #: they ran their defaults (`tuner.first_launch`)
    trial_failures: dict[int, str] = field(default_factory=dict)

    def hardware_figures(self) -> Hardware:
        return self.hardware or hardware_for_device(self.device)

    def bounds(self) -> dict[int, Bound | None]:
        """Per rung row: its performance bound (model.bound_for), None where it has none."""
        hw = self.hardware_figures()
        return {r.rung: bound_for(get_rung(r.rung), r.params, self.problem, hw)
                for r in self.rows}

    def speedups(self) -> dict[int, tuple[float | None, float | None]]:
        """Per rung: (speed-up over the previous ok row, speed-up over rung 1)."""
        first = next((r.ms for r in self.rows if r.rung == 1 and r.ok), None)
        out: dict[int, tuple[float | None, float | None]] = {}
        prev: float | None = None
        for r in self.rows:
            if not r.ok or r.ms is None:  # run_rung times every ok row; one built by hand may not
                out[r.rung] = (None, None)
                continue
            over_prev = prev / r.ms if prev is not None else None
            over_first = first / r.ms if first is not None else None
            out[r.rung] = (over_prev, over_first)
            prev = r.ms
        return out

    def reference(self) -> dict | None:
        """The row that "% of reference" compares with: the device's vendor BLAS when it ran and
        was right, else NumPy's (see references.baseline)."""
        return baseline(self.references)

    def to_json(self) -> dict:
        ups = self.speedups()
        base = self.reference()
        bounds = self.bounds()
        rows = []
        for r in self.rows:
            d = r.to_json()
            d["params_source"] = self.sources.get(r.rung, "default")
            d["speedup_prev"], d["speedup_rung1"] = ups[r.rung]
            d["pct_of_reference"] = percent_of(r.gflops, base)
            b = bounds[r.rung]
            d["bound_gflops"] = b.gflops if b else None
            d["pct_of_bound"] = b.percent(r.gflops) if b else None
            d["bound_limit"] = b.limit if b else None
            rows.append(d)
        return {
            "format": FORMAT,
            "device": self.device.to_json(),
            "size": self.problem.as_list(),
            "rows": rows,
            "references": self.references,
            "pct_of_reference_base": base["name"] if base else None,
            "bound_hardware": self.hardware_figures().to_json(),
            "trial_failures": {str(n): why for n, why in self.trial_failures.items()},
            "provenance": provenance(self.command),
        }


def provenance(command: str) -> dict:
    """Who made a result: date, command and every library version that can change a number."""
    return {
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "clgemm": __version__,
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        **versions(),
        "host": _platform.node(),
    }


def run_ladder(device: DeviceInfo, rungs: list[int], problem: Problem,
               params: Mapping[int, Mapping[str, int]] | None = None,
               sources: Mapping[int, str] | None = None,
               warmup: int | None = None, repeats: int | None = None,
               command: str = "", progress=None) -> LadderRun:
    """Run the rungs in order. `params` maps rung -> full parameter set (validated by caller)."""
    dw, dr = default_repeats(device)
    warmup = dw if warmup is None else warmup
    repeats = dr if repeats is None else repeats
    chosen = {n: dict((params or {}).get(n) or get_rung(n).defaults()) for n in rungs}
    check_workspace(device, problem, [(get_rung(n), chosen[n]) for n in rungs])
    backend = open_backend(device)
    ws = Workspace(backend, problem)
    rows = []
    for number in rungs:
        rung = get_rung(number)
        if progress:
            progress(f"rung {number} ({rung.title}) {rung.params_text(chosen[number])}")
        rows.append(run_rung(backend, ws, rung, chosen[number], repeats=repeats, warmup=warmup))
    if progress:
        progress("references")
    references = collect_references(backend, ws, warmup, repeats)
    backend.release()
    return LadderRun(device, problem, rows, references,
                     dict(sources or {}), command)


def compare_with_defaults(device: DeviceInfo, problem: Problem,
                          tuned: Mapping[int, Mapping[str, int]], rounds: int = 10,
                          command: str = "", progress=None) -> dict:
    """Tuned against default parameters for each rung, measured in alternating rounds in one
    process on the same inputs. Separate runs drift by tens of percent on a loaded CPU, which
    swamps the difference this comparison is after; alternating rounds put both under the same
    conditions. `slowdown` is tuned time over default time (above 1: the tuned set is slower)."""
    check_workspace(device, problem, [(get_rung(n), p) for n, p in tuned.items()]
                    + [(get_rung(n), get_rung(n).defaults()) for n in tuned], vendor_c=False)
    backend = open_backend(device)
    ws = Workspace(backend, problem)
    rows = []
    for number, params in tuned.items():
        rung = get_rung(number)
        default = rung.defaults()
        if progress:
            progress(f"rung {number}: {rung.params_text(params)} against defaults")
        times: dict[str, list[float]] = {"tuned": [], "default": []}
        status = "ok"
        for i in range(max(1, rounds)):
            order = [("tuned", params), ("default", default)]
            for label, p in (order if i % 2 == 0 else order[::-1]):
                res = run_rung(backend, ws, rung, p, repeats=3, warmup=1)
                if not res.ok:
                    status = f"{label} {res.status}: {res.message}"
                    break
                times[label].extend(res.times_ms)
            if status != "ok":
                break
        row = {"rung": number, "tuned": dict(params), "default": default, "status": status}
        if status == "ok":
            t_ms, d_ms = (float(np.median(times[k])) for k in ("tuned", "default"))
            row.update(tuned_ms=t_ms, default_ms=d_ms, tuned_gflops=problem.gflops(t_ms),
                       default_gflops=problem.gflops(d_ms), slowdown=t_ms / d_ms,
                       launches=len(times["tuned"]))
        rows.append(row)
    backend.release()
    return {"format": VS_DEFAULTS_FORMAT, "device": device.to_json(), "size": problem.as_list(),
            "rows": rows, "provenance": provenance(command)}


def ladder_rows(run: LadderRun) -> list[dict]:
    """One flat row per line of the ladder's table, rungs then references, for CSV."""
    data = run.to_json()
    out = [{"rung": r["rung"], "name": r["name"], "params": get_rung(r["rung"]).params_text(
                r["params"]), "config": r["params_source"], "status": r["status"],
            "ms": r["ms"], "helper_ms": r["helper_ms"], "gflops": r["gflops"],
            "pct_of_reference": r["pct_of_reference"], "pct_of_bound": r["pct_of_bound"],
            "bound_gflops": r["bound_gflops"], "bound_limit": r["bound_limit"],
            "speedup_prev": r["speedup_prev"], "speedup_rung1": r["speedup_rung1"],
            "rel_error": r["rel_error"], "message": r["message"]}
           for r in data["rows"]]
    out += [{"rung": "ref", "name": ref["name"], "params": "", "config": "",
             "status": ref.get("status", "ok"), "ms": ref.get("ms"), "helper_ms": None,
             "gflops": ref.get("gflops"), "pct_of_reference": percent_of(ref.get("gflops"),
                                                                         run.reference()),
             "pct_of_bound": None, "bound_gflops": None, "bound_limit": None,
             "speedup_prev": None, "speedup_rung1": None, "rel_error": ref.get("rel_error"),
             "message": ref.get("note") or ref.get("timing", "")}
            for ref in data["references"]]
    return out


def vs_defaults_rows(result: dict) -> list[dict]:
    """One flat row per rung of `compare_with_defaults`, for CSV."""
    return [{"rung": r["rung"], "tuned": get_rung(r["rung"]).params_text(r["tuned"]),
             "default": get_rung(r["rung"]).params_text(r["default"]), "status": r["status"],
             **{k: r.get(k) for k in ("tuned_ms", "default_ms", "tuned_gflops",
                                      "default_gflops", "slowdown", "launches")}}
            for r in result["rows"]]
