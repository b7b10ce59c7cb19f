"""What each technique of the tiled kernel adds on one device: its stored configuration
measured as it is and again with one technique at a time taken out, kernel only, each result
checked. A technique the configuration does not use is not measured, so the numbers say what
the tune's own choice gains from each of its parts on that device (a CPU's and a GPU's stored
configurations use different parts), not what a technique would add to some other
configuration.

A busy CPU's timings of one configuration move between runs by more than some techniques
are worth there, so every configuration is measured in several rounds, each round all of them
in turn, and the median of the rounds is what counts. The report is text, one line
a configuration, which `clgemm.course.ablation` reads back. Every launch runs in the tuner's
measuring child process, so a variant that crashes its compiler is recorded as such and the
run goes on."""

from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from clgemm.backends import Backend
from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.measure.references import vendor_reference
from clgemm.measure.rung_runner import Workspace
from clgemm.rungs.base import Params
from clgemm.rungs.tiled import TILED
from clgemm.tuner.evaluate import Evaluator


@dataclass(frozen=True)
class Technique:
    """One part of a configuration: whether `params` use it, and `params` without it."""

    label: str
    uses: Callable[[Params], bool]
    without: Callable[[Params], dict[str, int]]


def _cache(p: Params) -> bool:
    return bool(p["CACHE_A"] or p["CACHE_B"])


#: in the order the course's table shows them
TECHNIQUES = (
    Technique("register vectors (VWM, VWN)", lambda p: p["VWM"] > 1 or p["VWN"] > 1,
              lambda p: {**p, "VWM": 1, "VWN": 1}),
    # WIDTH is the width of the loads that fill local memory: without it nothing reads so
    Technique("wide loads (WIDTH)", lambda p: p["WIDTH"] > 1 and _cache(p),
              lambda p: {**p, "WIDTH": 1}),
    Technique("local memory (CACHE_A, CACHE_B)", _cache,
              lambda p: {**p, "CACHE_A": 0, "CACHE_B": 0, "PIPELINE": 0}),
    # a CPU's choice: without it, both operands come through local memory
    Technique("no local memory", lambda p: not _cache(p),
              lambda p: {**p, "CACHE_A": 1, "CACHE_B": 1, "PANELS": 0, "LOCKSTEP": 0}),
    Technique("panels (PANELS)", lambda p: bool(p["PANELS"]), lambda p: {**p, "PANELS": 0}),
    Technique("lockstep (LOCKSTEP)", lambda p: bool(p["LOCKSTEP"]),
              lambda p: {**p, "LOCKSTEP": 0}),
    Technique("cp.async pipeline (PIPELINE)", lambda p: bool(p["PIPELINE"]),
              lambda p: {**p, "PIPELINE": 0}),
    Technique("orders (RASTER, WARP_M)", lambda p: bool(p["RASTER"] or p["WARP_M"]),
              lambda p: {**p, "RASTER": 0, "WARP_M": 0}),
    Technique("tile depth unrolled (UNROLL_K)", lambda p: bool(p["UNROLL_K"]),
              lambda p: {**p, "UNROLL_K": 0}),
)

#: a measured line: the median GFLOP/s, what was left out (or "stored"), the parameters, and
#: each round's GFLOP/s
MEASURED = re.compile(r"^\s+([\d,]+) GFLOP/s\s+(stored|without: (.+?)) :: (.*?) :: rounds (.*)$")
#: a line of a configuration that did not run: its status, what was left out, why
REFUSED = re.compile(r"^\s+(\S+)\s+without: (.+?) :: (.*)$")


def variants(stored: Params) -> Iterator[tuple[Technique, dict[str, int]]]:
    """Each technique the stored configuration uses, with that configuration without it."""
    for technique in TECHNIQUES:
        if technique.uses(stored):
            yield technique, technique.without(stored)


def ablate(backend: Backend, size: int, rounds: int, say: Callable[[str], None]) -> None:
    """The stored configuration at size³ and each of its variants, one line each, after a
    line naming the device and one with the vendor's SGEMM at that size."""
    say(f"# {backend.device.name} ({backend.name}), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {rounds} rounds")
    ws = Workspace(backend, Problem(size, size, size))
    vendor = vendor_reference(backend, ws, warmup=2, repeats=7)
    say(f"{size}^3: {vendor['name']} {vendor['gflops'] or 0:,.0f} GFLOP/s ({vendor['status']})")
    found = lookup.best(backend.device, TILED, (size, size, size))
    stored = TILED.resolve(dict(found.params) if found else {})
    runs: dict[str, tuple[dict[str, int], list[float]]] = {}
    for label, params in [("stored", stored)] + [(f"without: {t.label}", p)
                                                 for t, p in variants(stored)]:
        full = TILED.resolve(params)
        # the warp blocks' fit is among the kernel's own constraints
        if TILED.first_violation(full, backend.device.limits()):
            say(f"  {'refused':>15}  {label} :: {TILED.params_text(full)}: not a configuration "
                "the device runs")
        else:
            runs[label] = (full, [])
    failed: dict[str, str] = {}
    # the tuner's evaluator measures in a child process: a compiler that aborts on a variant
    # (PoCL 3.1 asserts on one) takes that child with it, not the run
    with Evaluator(backend.device, ws.problem, repeats=7, warmup=2) as evaluator:
        for _ in range(rounds):
            for label, (full, speeds) in runs.items():
                if label in failed:
                    continue
                record = evaluator.evaluate(TILED.number, full)
                if record["status"] == "ok":
                    speeds.append(record["gflops"] or 0.0)
                else:
                    failed[label] = (f"{record['status']:>15}  {label} :: "
                                     f"{TILED.params_text(full)}: "
                                     f"{str(record.get('message', ''))[:120]}")
    for label, (full, speeds) in runs.items():
        if label in failed:
            say(f"  {failed[label]}")
            continue
        each = " ".join(f"{g:,.0f}" for g in speeds)
        say(f"  {statistics.median(speeds):9,.0f} GFLOP/s  {label} :: "
            f"{TILED.params_text(full)} :: rounds {each}")
