"""Where a launch's share of the FMA peak went, from its counters, beside what the bound assumed.

A launch's FMA work over the FMA work its cycles could have held is a product of three
measured factors, each with a reason and each with a counterpart among the bound's terms:

    share of peak = busy x issued x FMA share
    busy      = SM active cycles / elapsed cycles            (bound: work distribution)
    issued    = instructions / (active cycles x SMs x schedulers)  (bound: latency, taken as 1
                                                              where the FMA chains hide it)
    FMA share = (FMAs / warp width) / instructions           (bound: lanes x instruction mix
                                                              x tile overhead)

The FMAs are counted per work-item and taken in whole warps, so a kernel whose FMA
instructions leave lanes idle shows it in the FMA share. The identity holds for every kernel,
cuBLAS's included, so the same account compares the two. Its parts are counted per
instruction, which no clock changes: counters taken under Nsight Compute's fixed clock account
for the share at any clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clgemm.core.tables import FULL, Column, Layout, fit_lines, render
from clgemm.devices.hardware import Hardware
from clgemm.model.bound import DISTRIBUTION, LANES, LATENCY, MIX, TILE, Bound
from clgemm.model.counters import Counters

#: stall reasons that are not waits: a warp issued, or was ready while another issued
_NOT_WAITS = ("selected", "not_selected")


@dataclass(frozen=True)
class Factor:
    name: str
    #: measured share (0-1)
    measured: float
    #: the bound's counterpart (0-1), None where the bound has none
    assumed: float | None
    #: what the bound's figure is
    assumed_as: str
    why: str


@dataclass(frozen=True)
class GapAccount:
    counters: Counters
    factors: tuple[Factor, ...]
    #: product of the measured factors: the launch's FMA work over its cycles' capacity
    share: float
    #: the same share from the launch's duration and clock, where the counters have them
    share_from_time: float | None
    bound_share: float | None
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.counters.source, "kernel": self.counters.kernel,
                "share_of_peak": self.share, "share_from_time": self.share_from_time,
                "bound_share_of_peak": self.bound_share,
                "factors": [{"name": f.name, "measured": f.measured, "assumed": f.assumed,
                             "assumed_as": f.assumed_as, "why": f.why} for f in self.factors],
                "stalls_per_issue": dict(self.counters.stalls), "notes": list(self.notes)}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _issue_why(c: Counters, hw: Hardware, b: Bound | None) -> str:
    """Why issue slots went empty: how few sub-groups each scheduler had to pick from, what
    held them to that, and what they waited on."""
    parts = []
    if c.warps_per_scheduler is not None:
        parts.append(f"{c.warps_per_scheduler:g} sub-groups per scheduler")
    elif c.warps_per_sm is not None:
        parts.append(f"{c.warps_per_sm / hw.issue_per_clock:.2f} sub-groups per scheduler")
    if c.registers is not None:
        est = f", the bound estimated ~{b.occupancy.registers}" if b is not None else ""
        limits = [(v, k) for k, v in (("registers", c.block_limit_registers),
                                      ("local memory", c.block_limit_shared)) if v is not None]
        held = min(limits, default=None)
        by = (f"; {held[1]} hold {held[0]:g} work-group{'' if held[0] == 1 else 's'} per unit"
              if held else "")
        parts.append(f"{c.registers:g} registers per work-item{est}{by}")
    waits = sorted(((v, k) for k, v in c.stalls.items() if k not in _NOT_WAITS and v >= 0.01),
                   reverse=True)
    if waits:
        parts.append("waits per issued instruction: " +
                     ", ".join(f"{k.replace('_', ' ')} {v:g}" for v, k in waits[:4]))
    return "; ".join(parts) or "the counters do not say"


def _mix_why(c: Counters, fma: float) -> str:
    """What the instructions that are not FMAs were, per FMA instruction."""
    parts = []
    rest = c.executed - fma
    for name, count in (("local loads", c.shared_loads), ("cp.async", c.ldgsts),
                        ("global loads", c.global_loads)):
        if count:
            parts.append(f"{count / fma:.3f} {name}")
            rest -= count
    head = ", ".join(parts)
    return (f"per FMA instruction: {head}{', ' if head else ''}{rest / fma:.3f} other "
            f"(addresses, loop, barriers, stores)")


def account(c: Counters, hw: Hardware, flops: int | None, b: Bound | None = None) -> GapAccount:
    """The account of `c` on `hw` (schedulers per unit and warp width from the table), with
    the bound `b` of the same configuration and size where there is one."""
    schedulers = hw.issue_per_clock
    fma = c.ffma_threads / hw.simd_width
    busy = c.active_cycles / c.elapsed_cycles
    issued = c.executed / (c.active_cycles * c.sms * schedulers)
    fma_share = fma / c.executed if c.executed else 0.0

    def term(*names: str) -> float | None:
        return None if b is None else math.prod(b.term(name).share for name in names)

    factors = (
        Factor("units busy", busy, term(DISTRIBUTION), "work distribution",
               f"{c.grid_size:,} work-groups of {c.block_size} work-items on {c.sms} units"),
        Factor("issue slots taken", issued, term(LATENCY), "latency",
               _issue_why(c, hw, b)),
        Factor("FMAs among instructions", fma_share, term(LANES, MIX, TILE),
               "lanes x instruction mix x tile overhead", _mix_why(c, fma)),
    )
    share = busy * issued * fma_share
    notes = []
    capacity_flops = 2 * hw.lanes_per_cu * c.sms
    from_time = None
    if c.duration_ms and c.sm_ghz and flops:
        from_time = flops / (c.duration_ms * 1e-3 * c.sm_ghz * 1e9 * capacity_flops)
    if flops and abs(2 * c.ffma_threads - flops) > 0.01 * flops:
        notes.append(f"the launch did {2 * c.ffma_threads:,.0f} FLOPs in FMAs, the product "
                     f"{flops:,}: the counters are of another size, or of padded tiles")
    if b is not None and b.work_groups != c.grid_size:
        notes.append(f"the bound's configuration has {b.work_groups:,} work-groups, the "
                     f"launch {c.grid_size:,}: the counters may be of another configuration")
    return GapAccount(c, factors, share, from_time, None if b is None else
                      b.gflops / hw.peak_gflops, tuple(notes))


def explain_account(a: GapAccount, layout: Layout = FULL) -> list[str]:
    """The account as lines for a terminal, after the bound's."""
    c = a.counters
    rows = [[f.name, _pct(f.measured), _pct(f.assumed), f.assumed_as if f.assumed is not None
             else "", f.why] for f in a.factors]
    lines = [f"measured: {c.kernel} ({c.source})",
             render(["factor", "measured", "bound", Column("the bound's term", wrap=12),
                     Column("why", wrap=30)], rows, layout),
             f"share of the FMA peak: {_pct(a.share)} measured (the product of the factors)"
             + (f", {_pct(a.share_from_time)} from the duration at {c.sm_ghz:g} GHz"
                if a.share_from_time is not None else "")
             + (f"; the bound {_pct(a.bound_share)}" if a.bound_share is not None else "")]
    lines += [f"note: {note}" for note in a.notes]
    return fit_lines(lines, layout)
