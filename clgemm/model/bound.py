"""An upper bound on a rung's GFLOP/s for one configuration, problem and device.

In the spirit of Lai and Seznec's SGEMM bound: take an optimistic view of the machine (no bank
conflicts, perfectly coalesced loads, address arithmetic, barriers and tile copies free) and ask
what the kernel's own instruction stream still cannot get past. Each term is a ceiling with a
reason a student can check by hand:

- peak: FP32 FMA lanes x compute units x clock x 2;
- lanes: a work-group smaller than a sub-group (or not a multiple of one) leaves GPU lanes idle;
- instruction mix: per step of the innermost loop, the FMAs share the issue slots with the
  loads (and other instructions) that feed them; the FMA share of the slots is the ceiling;
- local memory: bytes the step reads from local memory per FMA against its bandwidth per
  compute unit (a value every work-item of a sub-group reads is fetched once);
- latency: how many sub-groups can be resident (work-group size, local memory, registers
  estimated from the accumulators) times the independent FMAs each has in flight, against the
  FMA latency;
- work distribution: work-groups against compute units (the busiest unit sets the time) and
  padding to whole tiles;
- global memory: A and B read once and C written once, against the DRAM bandwidth. The
  work-groups read more than that (each its own panels of A and B, Lai and Seznec's per-tile
  traffic), but the committed H100 journals show kernels with small tiles beating a per-tile
  DRAM term: the L2 cache serves the panels that neighbouring work-groups share. The per-tile
  bytes are reported beside the term, not bounded by it.

bound = peak x min(lanes x mix, local, lanes x latency) x distribution, capped by global memory.
The limiting term is the one with the smallest share of the peak. Measured GFLOP/s over the
bound is "% of bound"; a result above 100% means an assumption here is wrong (or a figure is).

A known gap: a compiler may merge loads the source issues separately (consecutive k, say), which
the instruction count does not see, and would let a kernel beat the instruction-mix term; the
committed measurements are tested against the bound to catch such a case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from clgemm.configs.launch import round_up
from clgemm.configs.splits import read_b_pays_on, slices_of_rung
from clgemm.core.problem import Problem
from clgemm.core.tables import BRIEF_NOTE, FULL, Column, Layout, fit_lines, params_brief, render
from clgemm.devices.hardware import Hardware
from clgemm.model.inner_loops import LoopStep, step_for
from clgemm.rungs import Rung, get_rung
from clgemm.rungs.skinny import SKINNY, short_is_n

PEAK = "peak"
LANES = "lanes"
MIX = "instruction mix"
TILE = "tile overhead"
LOCAL = "local memory"
LATENCY = "latency"
DISTRIBUTION = "work distribution"
GLOBAL = "global memory"

FLOAT_BYTES = 4


@dataclass(frozen=True)
class Term:
    name: str
    #: this term alone as a ceiling, GFLOP/s (math.inf where it does not apply)
    gflops: float
    #: share of the peak (gflops / peak)
    share: float
    detail: str


@dataclass(frozen=True)
class Occupancy:
    groups_per_cu: int
    #: what limits groups_per_cu
    limited_by: str
    resident_subgroups: int
    subgroups_per_group: int
    registers: int


@dataclass(frozen=True)
class Bound:
    rung: int
    params: dict[str, int]
    shape: tuple[int, int, int]
    hardware: Hardware
    step: LoopStep
    terms: tuple[Term, ...]
    gflops: float
    limit: str
    occupancy: Occupancy
    work_groups: int
    #: bytes the rung's helper kernels (the transpose of B) move through DRAM
    helper_bytes: int = 0
    #: bytes that must come from DRAM (A, B, C once), and what the work-groups read as tiles
    dram_bytes: int = 0
    tile_bytes: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def term(self, name: str) -> Term:
        return next(t for t in self.terms if t.name == name)

    @property
    def flops(self) -> int:
        m, n, k = self.shape
        return 2 * m * n * k

    def gflops_with_helpers(self) -> float:
        """The bound when the time includes the helper kernels: those only move data, so they
        take at least their bytes over the DRAM bandwidth, on top of the kernel's own time."""
        if not self.helper_bytes:
            return self.gflops
        kernel_s = self.flops / (self.gflops * 1e9)
        helper_s = self.helper_bytes / (self.hardware.mem_gbps * 1e9)
        return self.flops / (kernel_s + helper_s) / 1e9

    def percent(self, measured_gflops: float | None, helpers: bool = False) -> float | None:
        """Measured over bound, in percent (helpers: the time measured includes the helpers)."""
        if not measured_gflops:
            return None
        return 100.0 * measured_gflops / (self.gflops_with_helpers() if helpers else self.gflops)

    def limit_text(self) -> str:
        return f"{self.limit} ({self.term(self.limit).detail})"

    def to_json(self) -> dict[str, Any]:
        return {"gflops": self.gflops, "gflops_with_helpers": self.gflops_with_helpers(),
                "limit": self.limit, "dram_bytes": self.dram_bytes,
                "tile_bytes": self.tile_bytes,
                "terms": {t.name: {"gflops": _finite(t.gflops), "share": _finite(t.share),
                                   "detail": t.detail} for t in self.terms},
                "notes": list(self.notes)}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


# -- the pieces ----------------------------------------------------------------------------------
def _distinct(along: str, lanes: int, l0: int, l1: int) -> int:
    """Different values one load reads across a sub-group of `lanes` consecutive work-items
    (local id 0 fastest)."""
    if along == "m":
        return min(lanes, l0)
    if along == "n":
        return min(l1, -(-lanes // l0))
    return lanes


def _occupancy(rung: Rung, params: Mapping[str, int], hw: Hardware, step: LoopStep, items: int,
               groups: int) -> tuple[Occupancy, list[str]]:
    notes: list[str] = []
    per_group = -(-items // hw.simd_width) if hw.lockstep else 1
    local = rung.local_mem_bytes(params)
    limits = {"the work-group limit": hw.max_groups_per_cu,
              "work-items": hw.max_items_per_cu // items,
              "sub-groups": hw.max_subgroups_per_cu // per_group}
    if local:
        limits["local memory"] = hw.local_mem_per_cu // local
    if hw.registers_per_cu:
        limits["registers"] = hw.registers_per_cu // (step.registers * items)
    by = min(limits, key=lambda k: limits[k])
    fit = limits[by]
    if fit < 1:
        notes.append(f"{by} would not hold even one work-group; counted as one")
        fit = 1
    if hw.max_registers_per_item and step.registers > hw.max_registers_per_item:
        notes.append(f"about {step.registers} registers per work-item, more than the "
                     f"{hw.max_registers_per_item} a work-item may have: expect spills, which "
                     f"the bound ignores")
    resident_groups = min(fit, -(-groups // hw.compute_units))
    resident = min(hw.max_subgroups_per_cu, resident_groups * per_group)
    return Occupancy(fit, by, resident, per_group, step.registers), notes


def helper_bytes(rung: Rung, problem: Problem, params: Mapping[str, int] | None = None) -> int:
    """DRAM bytes of the rung's helper kernels: the transpose of B reads B and writes B^T, a
    packing into panels reads and writes its operand."""
    total = 0
    helpers = rung.helpers_for(params) if params is not None else rung.helpers
    for helper in helpers:
        if helper.kernel == "transpose" or (helper.kernel == "pack_panels"
                                            and helper.operand == "B"):
            total += 2 * FLOAT_BYTES * problem.k * problem.n
        elif helper.kernel == "pack_panels":
            total += 2 * FLOAT_BYTES * problem.m * problem.k
    return total * problem.batch


def _k_tile(rung: Rung, params: Mapping[str, int]) -> int:
    """Depth of the K loop's tiles: rungs that do any K still run whole tiles (zero-filled)."""
    if rung.any_size:
        return params.get("TSK", 1)
    return rung.k_step(params)


def _count(n: float, noun: str) -> str:
    number = f"{n:,}" if isinstance(n, int) else f"{n:g}"
    return f"{number} {noun}{'' if n == 1 else 's'}"


def _num(x: float) -> str:
    if not math.isfinite(x):
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


# -- the terms -----------------------------------------------------------------------------------
def _peak_term(hw: Hardware) -> Term:
    return Term(PEAK, hw.peak_gflops, 1.0, f"{hw.lanes_per_cu:g} lanes x {hw.compute_units} CUs x "
                                           f"{hw.clock_mhz:g} MHz x 2")


def _lanes_term(hw: Hardware, items: int) -> Term:
    """In lockstep, a sub-group runs whole even when the work-group does not fill it."""
    if hw.lockstep:
        subgroups = -(-items // hw.simd_width)
        lanes = items / (subgroups * hw.simd_width)
        lane_text = (f"{items} work-items per work-group in {subgroups} sub-group"
                     f"{'s' if subgroups > 1 else ''} of {hw.simd_width}")
    else:
        lanes, lane_text = 1.0, "the compiler chooses how to vectorise (not counted)"
    return Term(LANES, hw.peak_gflops * lanes, lanes, lane_text)


def _mix_term(step: LoopStep, hw: Hardware, lanes: float) -> Term:
    """Clocks one sub-group's step needs on each resource of a compute unit: the FMAs' share
    of the busiest resource is the ceiling."""
    arith = step.fmas + step.extra_arith
    issued = arith + step.other + step.loads
    clocks = max(arith / hw.fma_per_clock, step.loads / hw.loads_per_clock,
                 issued / hw.issue_per_clock)
    mix = (step.fmas / hw.fma_per_clock) / clocks
    extra = []
    if step.extra_arith:
        extra.append(f"{step.extra_arith:g} other arithmetic")
    if step.other:
        extra.append(f"{step.other:g} other")
    extra_text = f" + {' + '.join(extra)} ({step.extra_note})" if extra else ""
    return Term(MIX, hw.peak_gflops * lanes * mix, mix,
                f"{_count(step.fmas, 'FMA')}, {_count(step.loads, 'load')} "
                f"[{step.loads_text()}]"
                f"{extra_text} per step")


#: per tile, besides its copies: the barrier and the loop's own count, compare and branch (a
#: low estimate, so that the term errs on the generous side)
TILE_FIXED = 4


def _tile_term(rung: Rung, params: Mapping[str, int], step: LoopStep, tk: int,
               loop: tuple[int, int] = (1, 0)) -> Term:
    """The instructions a work-item issues once per tile of K rather than once per step: the
    loads of the next tiles from global memory and their stores into local memory (one
    cp.async each in a PIPELINE, which also commits and waits), a barrier, the loop. They take
    issue slots from the steps' FMAs; the share the steps keep is the ceiling. `tk` is the
    depth of one work-item's tile; `loop` is (the group's slices of K, the steps each walks):
    a group cut into slices walks a loop that many times shorter and then sums the slices,
    which the loop's steps share too (`_slice_sums`)."""
    derived = {**params, **rung.derive(dict(params))}
    if "LPTA" not in derived or "LPTB" not in derived or tk <= 1:
        return Term(TILE, math.inf, 1.0, "no tiles of K staged in local memory")
    a = derived["LPTA"] * derived.get("CACHE_A", 1)
    b = derived["LPTB"] * derived.get("CACHE_B", 1)
    pipeline = derived.get("PIPELINE", 0)
    copies = a + b if pipeline else 2 * (a + b)
    fixed = TILE_FIXED + (2 if pipeline else 0)
    per_tile = tk * (step.fmas + step.extra_arith + step.other + step.loads)
    share = per_tile / (per_tile + copies + fixed) if a + b else 1.0
    how = (f"{_count(a + b, 'cp.async')}, commit and wait" if pipeline else
           f"{_count(a + b, 'global load')} and as many local stores")
    detail = (f"{how}, {TILE_FIXED} for the barrier and loop, per tile of {tk} steps "
              f"({per_tile:,.0f} slots)")
    slices, steps = loop
    if slices > 1:
        sums = _slice_sums(derived, slices)
        in_loop = steps / tk * (per_tile + copies + fixed)
        share *= in_loop / (in_loop + sums)
        detail += (f"; K in {slices} slices of the group, {steps:,} steps each, then "
                   f"{sums:,.0f} slots per work-item to sum them")
    return Term(TILE, math.inf, share, detail)


def _slice_sums(derived: Mapping[str, int], slices: int) -> float:
    """Issue slots per work-item, averaged over a group of `slices` slices of K, for adding
    the slices' sums: each work-item of slices 1.. stores its VPTM x WPTN sums in local memory,
    one of slice 0 loads and adds those of every other slice; and the barrier between."""
    sums = derived["VPTM"] * derived["WPTN"]
    stores, loads_and_adds, barriers = (slices - 1) * sums, 2 * (slices - 1) * sums, slices
    return (stores + loads_and_adds + barriers) / slices


def _local_term(step: LoopStep, hw: Hardware, l0: int, l1: int) -> Term:
    """Bytes per FMA read from local memory, a value shared by a sub-group's work-items
    counted once, against the compute units' local bandwidth."""
    lanes_per_sg = min(hw.simd_width, l0 * l1)
    local_bytes = sum(r.count * r.width * FLOAT_BYTES * _distinct(r.along, lanes_per_sg, l0, l1)
                      for r in step.reads if r.space == "local")
    per_fma = local_bytes / (step.fmas * lanes_per_sg)
    local_bw = hw.local_gbps_per_cu * hw.compute_units
    local_gflops = 2 * local_bw / per_fma if per_fma else math.inf
    return Term(LOCAL, local_gflops, local_gflops / hw.peak_gflops,
                f"{per_fma:.3g} B per FMA at {hw.local_gbps_per_cu:,.0f} GB/s per CU"
                if per_fma else "no local-memory reads in the step")


def _latency_term(step: LoopStep, hw: Hardware, occ: Occupancy, lanes: float) -> Term:
    """FMAs the resident sub-groups can start per clock against what the unit does."""
    per_sg = min(step.chains / hw.fma_latency, hw.subgroup_issue_per_clock)
    latency = min(1.0, occ.resident_subgroups * per_sg / hw.fma_per_clock)
    return Term(LATENCY, hw.peak_gflops * lanes * latency, latency,
                f"{_count(occ.resident_subgroups, 'sub-group')} resident per CU "
                f"({_count(occ.groups_per_cu, 'work-group')} fit, by {occ.limited_by}; "
                f"~{occ.registers} registers per work-item), each with "
                f"{_count(step.chains, 'independent FMA')} per {hw.fma_latency:g} clocks, "
                f"against {hw.fma_per_clock:g} FMA instructions per clock")


def _distribution_term(problem: Problem, hw: Hardware, groups: int,
                       tile: tuple[int, int, int]) -> Term:
    """The busiest compute unit sets the time, and padding to whole tiles (M x N x K deep)
    is work done for nothing."""
    m, n, k = problem.m, problem.n, problem.k
    tm, tn, kt = tile
    per_cu = groups / hw.compute_units
    busiest = -(-groups // hw.compute_units)
    tail = per_cu / busiest
    padded = (-(-m // tm) * tm) * (-(-n // tn) * tn) * (-(-k // kt) * kt)
    padding = (m * n * k) / padded
    dist = tail * padding
    pad_text = f"; {padding:.1%} of the padded tiles is useful work" if padding < 1 else ""
    return Term(DISTRIBUTION, hw.peak_gflops * dist, dist,
                f"{_count(groups, 'work-group')} on {hw.compute_units} CUs: "
                f"{per_cu:,.2f} each, the busiest {busiest}{pad_text}")


def _traffic(problem: Problem, tm: int, tn: int) -> tuple[int, int]:
    """(bytes that must come from DRAM: A and B read once, C written once; bytes the
    work-groups ask for, each reading whole panels of A and B), for every product of a
    stack."""
    m, n, k = problem.m, problem.n, problem.k
    dram = FLOAT_BYTES * (m * k + k * n + m * n) * problem.batch
    tiles = FLOAT_BYTES * (-(-n // tn) * m * k + -(-m // tm) * n * k + m * n) * problem.batch
    return dram, tiles


def _global_term(problem: Problem, hw: Hardware, dram: int, tiles: int) -> Term:
    """Only the compulsory bytes are certain to come from DRAM: a cache shared by the compute
    units can serve the work-groups' repeated reads of the same panels."""
    global_gflops = problem.flops / dram * hw.mem_gbps
    return Term(GLOBAL, global_gflops, global_gflops / hw.peak_gflops,
                f"A, B read and C written once: {dram / 1e6:,.1f} MB at "
                f"{hw.mem_gbps:,.0f} GB/s (the work-groups read {tiles / 1e6:,.1f} MB of "
                f"tiles, {tiles / dram:.1f}x that; caches must catch the repeats)")


def _combine(terms: list[Term]) -> tuple[float, str]:
    """(the bound, the limiting term): peak x min(lanes x mix x tile, local, lanes x latency) x
    distribution, capped by global memory; PEAK where nothing short of the FMA units limits."""
    by_name = {t.name: t for t in terms}
    lanes, latency = by_name[LANES].share, by_name[LATENCY].share
    issue = by_name[MIX].share * by_name[TILE].share
    on_chip = min(lanes * issue, by_name[LOCAL].share, lanes * latency)
    compute = by_name[PEAK].gflops * on_chip * by_name[DISTRIBUTION].share
    global_gflops = by_name[GLOBAL].gflops
    value = min(compute, global_gflops)
    if global_gflops < compute:
        return value, GLOBAL
    shares = {name: by_name[name].share
              for name in (LANES, MIX, TILE, LOCAL, LATENCY, DISTRIBUTION)}
    limit = min(shares, key=lambda name: shares[name])
    return value, PEAK if shares[limit] >= 1.0 else limit


# -- the bound -----------------------------------------------------------------------------------
def bound(rung: Rung, params: Mapping[str, int], problem: Problem, hw: Hardware) -> Bound:
    """The bound for `rung` with `params` (divisibility already checked) on M x N x K."""
    params = {**rung.defaults(), **params}   # a record older than a parameter lacks it
    if rung.number == SKINNY.number and not short_is_n(problem.m, problem.n):
        # it computes C^T, N rows long
        problem = Problem(problem.n, problem.m, problem.k, problem.batch)
    step = step_for(rung, params).in_loads_of(hw.widest_load_floats)
    l0, l1 = rung.local_size(params)
    group_slices = rung.group_slices(params) if rung.group_slices else 1
    tm, tn = rung.output_tile(params)
    groups = -(-problem.m // tm) * -(-problem.n // tn)
    slices = (slices_of_rung(rung.number, hw.compute_units, params, problem.as_tuple(),
                             read_b_pays_on(hw, problem.as_tuple()))
              if problem.batch == 1 else 1)
    # gemm()'s slices of K, and a stack's products, are one grid with the tiles
    groups *= slices * problem.batch
    occ, notes = _occupancy(rung, params, hw, step, l0 * l1, groups)
    if slices > 1:
        notes.append(f"K in {slices} slices, as gemm() splits it here: {groups} work-groups, "
                     f"and one more launch sums the slices (not in the bound)")
    lanes = _lanes_term(hw, l0 * l1)
    dram, tiles = _traffic(problem, tm, tn)
    mix = _mix_term(step, hw, lanes.share)
    tile = _tile_term(rung, params, step, _k_tile(rung, params) // group_slices,
                      (group_slices, round_up(problem.k, _k_tile(rung, params)) // group_slices))
    tile = Term(TILE, mix.gflops * tile.share, tile.share, tile.detail)
    terms = [_peak_term(hw), lanes, mix, tile, _local_term(step, hw, l0, l1), _latency_term(step, hw, occ, lanes.share),
             _distribution_term(problem, hw, groups, (tm, tn, _k_tile(rung, params))),
             _global_term(problem, hw, dram, tiles)]
    value, limit = _combine(terms)
    return Bound(rung.number, params, problem.as_tuple(), hw, step, tuple(terms), value, limit,
                 occ, groups, helper_bytes(rung, problem, params), dram, tiles, tuple(notes))


def explain(b: Bound, layout: Layout = FULL) -> list[str]:
    """The bound as lines for a terminal: the step, each term with its reason, the result."""
    rows = [[t.name, f"{t.share:.1%}" if math.isfinite(t.share) else "-", _num(t.gflops),
             t.detail] for t in b.terms]
    m, n, k = b.shape
    params = " ".join(f"{key}={v}" for key, v in b.params.items())
    lines = [f"rung {b.rung} {params}, M={m} N={n} K={k}",
             f"innermost step: {b.step.source}",
             render(["term", "of peak", "GFLOP/s", Column("why", wrap=30)], rows, layout),
             f"bound {_num(b.gflops)} GFLOP/s = peak x min(lanes x mix x tile overhead, local "
             f"memory, lanes x latency) x work distribution, capped by global memory; limited "
             f"by {b.limit}"]
    if b.helper_bytes:
        lines.append(f"with the transpose of B ({b.helper_bytes / 1e6:,.1f} MB through DRAM) "
                     f"in the time: {_num(b.gflops_with_helpers())} GFLOP/s")
    lines += [f"note: {note}" for note in b.notes]
    return fit_lines(lines, layout)


def bounds_table(results: list[dict[str, Any]], hw: Hardware, layout: Layout = FULL) -> str:
    """One line per rung of `clgemm model`, from its JSON rows ({"rung", "params", "source",
    "status", "bound"}): the bound, its share of the peak, the limiting term and why."""
    rows = []
    for r in results:
        rung = get_rung(r["rung"])
        params = (rung.params_text(r["params"]) if layout.wide
                  else params_brief(r["params"], rung.defaults()))
        b = r.get("bound")
        if b is None:
            rows.append([r["rung"], params, r["source"], "", "", "",
                         f"not run here: {r['status']}"])
            continue
        rows.append([r["rung"], params, r["source"], f"{b['gflops']:,.0f}",
                     f"{b['gflops'] / hw.peak_gflops:.1%}", b["limit"],
                     b["terms"][b["limit"]]["detail"]])
    table = render(["rung", Column("parameters", wrap=20), Column("config", wrap=8),
                    Column("bound GFLOP/s", short="bound"), "of peak", "limited by",
                    Column("why", wrap=30)], rows, layout)
    return "\n".join([table] + ([] if layout.wide else fit_lines([BRIEF_NOTE], layout)))


def bound_for(rung: Rung, params: Mapping[str, int], problem: Problem, hw: Hardware
              ) -> Bound | None:
    """`bound`, or None where the parameters break one of the rung's divisibility constraints
    (a row that never ran needs no bound, and a table must not fail because of it)."""
    if rung.first_violation(params, None, stages=("divisibility",)) is not None:
        return None
    return bound(rung, params, problem, hw)
