"""The search space of one rung and the pruning funnel that shrinks it before anything is built.

Every configuration a rung's `Param.candidates` can form is generated, then removed at the first
named step it fails, in a fixed order: the rung's divisibility constraints, the device limits
(work-group size and sides, local memory, vector widths and extensions where the rung names
them), the problem size, and last the heuristics. Counting a configuration only at its first
failure makes the counts add up to the total and shows which rule does the work; putting the
cheap certain rules first means a heuristic is never blamed for a configuration that could not
have run anyway.

The tuner's own heuristics live here rather than in the rung modules so that the rungs keep
describing what is *legal* and the tuner what is *worth measuring*. They follow ASTRA's idea of
minimum resource-use thresholds (enough register reuse, enough parallelism) rather than a
model of the device; every one can be switched off (`--no-heuristics`), and one that would
remove every remaining configuration is skipped and reported as such, so a heuristic can narrow a
rung but never empty it.
"""

from __future__ import annotations

import itertools
import math
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from clgemm.configs.splits import reading_only, slices_of_rung
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.core.tables import FULL, Column, Layout, render
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import STAGES, VALUE_ERRORS, Constraint, Params, Rung
from clgemm.rungs.tiled import TILED, packs_itself, reads_b_itself

Config = tuple[int, ...]

#: smallest work-group worth running on a GPU: below a sub-group (16..64 lanes) SIMD lanes idle
GPU_MIN_GROUP = 16
#: a configuration must reach this fraction of the rung's best FMA-per-loaded-value ratio
REUSE_FRACTION = 0.25
#: registers one work-item may hold on a GPU: NVIDIA's most is 255, AMD's 256 vector registers.
#: A work-item's sums and one step's values of A and B beyond that spill to memory. The model's
#: bound does not count registers, so without this line it ranks such blocks first.
GPU_WORK_ITEM_REGISTERS = 255
#: work-groups per compute unit from which a product keeps every unit busy with whole groups:
#: below it a group cut into slices of K (the tiled kernel's KSPLIT) may put more warps to work,
#: from it the slices only add their sums, and the search leaves them out
SLICED_WAVES = 4


@dataclass(frozen=True)
class FunnelRow:
    stage: str
    name: str
    removed: int
    left: int
    note: str = ""


@dataclass
class SearchSpace:
    """The configurations left to measure, as tuples in `names` order.

    Strategies see only this (names, candidate values, the valid list), so the same search code
    runs live and in offline replay, where no rung object need exist."""

    names: tuple[str, ...]
    candidates: tuple[tuple[int, ...], ...]
    configs: list[Config]
    funnel: list[FunnelRow] = field(default_factory=list)
    generated: int = 0
    #: the space holds only configurations that read B as it lies (`kept_to_reading`, and
    #: every one left does: a heuristic never empties a space), so the entry its tune stores
    #: displaces one at its slot not measured reading B (`Database.record`)
    reads_b_only: bool = False
    #: the caller's --only: a configuration kept or stored with a value it leaves out stays
    #: out (`left_out_by_only`)
    only: Mapping[str, Sequence[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index: dict[Config, int] = {c: i for i, c in enumerate(self.configs)}
        width = len(self.names)
        self.array = np.array(self.configs, dtype=np.int64).reshape(len(self.configs), width)

    def __len__(self) -> int:
        return len(self.configs)

    def firsts_by(self, names: Sequence[str]) -> list[Config]:
        """The first configuration of each distinct combination of the values of `names`, in
        the space's order."""
        if not self.configs or not names:
            return self.configs[:1]
        cols = [self.names.index(n) for n in names]
        _, first = np.unique(self.array[:, cols], axis=0, return_index=True)
        return [self.configs[i] for i in sorted(first)]

    def __contains__(self, config: object) -> bool:
        return config in self.index

    def params(self, config: Config) -> dict[str, int]:
        return dict(zip(self.names, (int(v) for v in config)))

    def key(self, params: Mapping[str, int]) -> Config | None:
        """The tuple for a parameter dict, or None when its names are not this space's."""
        if set(params) != set(self.names):
            return None
        return tuple(int(params[n]) for n in self.names)

    def hamming(self, config: Sequence[int]) -> np.ndarray:
        """Number of differing parameters between `config` and every valid configuration. A
        value no configuration can hold (beyond int64, read from an edited journal) differs
        from all of them rather than stopping the search."""
        try:
            row = np.asarray(config, dtype=np.int64)
        except (OverflowError, TypeError, ValueError):
            distance = np.zeros(len(self.configs), dtype=np.int64)
            for column, value in enumerate(config):
                try:
                    distance += self.array[:, column] != np.int64(value)
                except (OverflowError, TypeError, ValueError):
                    distance += 1
            return distance
        return (self.array != row).sum(axis=1)


# -- the tuner's heuristics --------------------------------------------------------------------

def work_item_block(rung: Rung, p: Params) -> tuple[float, float]:
    """Outputs one work-item computes along M and along N, from the rung's own geometry (of
    one slice of a group that is cut along K: each slice's work-items hold the whole tile). The
    tiled kernel's self-packing form walks its tile one piece of WPTM x WPTN sums at a time."""
    if rung.number == TILED.number and packs_itself(p):
        return p["WPTM"], p["WPTN"]
    tm, tn = rung.output_tile(p)
    lx, ly = rung.slice_local_size(p)
    return tm / max(lx, 1), tn / max(ly, 1)


def reuse_ratio(rung: Rung, p: Params) -> float:
    """Multiply-adds per value loaded into registers, per step of k: a bm x bn block of outputs
    needs bm values of A and bn of B for bm*bn FMAs. Naive is 0.5, an 8x8 block 4."""
    bm, bn = work_item_block(rung, p)
    return bm * bn / (bm + bn) if bm + bn > 0 else 0.0


def tuner_heuristics(rung: Rung, limits: DeviceLimits, problem: Problem,
                     survivors: Sequence[Params], read_b_pays: bool = False
                     ) -> tuple[Constraint, ...]:
    """The tuner's heuristic constraints for this rung, device and problem (`read_b_pays`:
    whether gemm() reads B as it lies at this shape where a configuration can, which the
    limits cannot say).

    `survivors` (the configurations that reached the heuristic stage) fixes the reuse threshold
    relative to the rung's best, because the absolute reuse a rung can reach differs by design:
    rungs 1-2 never exceed 0.5 and must not be emptied by a threshold meant for rung 6."""
    best = max((reuse_ratio(rung, p) for p in survivors), default=0.0)
    floor = REUSE_FRACTION * best

    def big_enough_group(p: Params, d: DeviceLimits) -> bool:
        return d.device_type != "GPU" or math.prod(rung.local_size(p)) >= GPU_MIN_GROUP

    def enough_reuse(p: Params, d: DeviceLimits) -> bool:
        return reuse_ratio(rung, p) >= floor - 1e-12

    def registers_hold(p: Params, d: DeviceLimits) -> bool:
        bm, bn = work_item_block(rung, p)
        return d.device_type != "GPU" or bm * bn + bm + bn <= GPU_WORK_ITEM_REGISTERS

    def tile_groups(p: Params) -> int:
        tm, tn = rung.output_tile(p)
        return -(-problem.m // tm) * -(-problem.n // tn) * problem.batch  # a stack: one grid

    def enough_groups(p: Params, d: DeviceLimits) -> bool:
        groups = tile_groups(p)
        if problem.batch == 1:
            # gemm()'s slices of K run as one grid with the tiles; a configuration that reads
            # B as it lies is split on thinner products than one that packs it
            groups *= slices_of_rung(rung.number, d.compute_units, p,
                                     (problem.m, problem.n, problem.k), read_b_pays)
        return groups >= d.compute_units

    def whole_groups_or_few(p: Params, d: DeviceLimits) -> bool:
        if rung.group_slices is None or rung.group_slices(p) == 1:
            return True
        return tile_groups(p) < SLICED_WAVES * d.compute_units

    def one_launch(p: Params, d: DeviceLimits) -> bool:
        return reads_b_itself(p)

    sliced = ((Constraint(f"groups cut into slices of K only where the tiles give fewer than "
                          f"{SLICED_WAVES} work-groups per compute unit", "heuristic",
                          whole_groups_or_few),)
              if rung.group_slices is not None else ())
    reading = ((Constraint("reads B as it lies where gemm() runs only such (one launch)",
                           "heuristic", one_launch),)
               if kept_to_reading(rung, limits, problem, read_b_pays) else ())
    return reading + (
        Constraint(f"work-group size >= {GPU_MIN_GROUP} on GPUs", "heuristic", big_enough_group),
        Constraint(f"FMA per loaded value >= {REUSE_FRACTION:g} x the rung's best "
                   f"({floor:.2f}; register reuse)", "heuristic", enough_reuse),
        Constraint(f"sums and one step's operands <= {GPU_WORK_ITEM_REGISTERS} registers a "
                   f"work-item on GPUs", "heuristic", registers_hold),
        Constraint("work-groups >= compute units (occupancy)", "heuristic", enough_groups),
    ) + sliced


def kept_to_reading(rung: Rung, limits: DeviceLimits, problem: Problem, read_b_pays: bool
                    ) -> bool:
    """Whether the tiled kernel's space at this problem holds only configurations that read B
    as it lies, those gemm() runs there (`splits.reading_only`): what it keeps at the shape
    now included, since the others would be measured without the pack of B they run behind."""
    return (rung.number == TILED.number and problem.batch == 1
            and reading_only(limits.device_type == "GPU", problem.as_tuple(), read_b_pays))


# -- building the space ------------------------------------------------------------------------

def _holds(c: Constraint, p: Params, limits: DeviceLimits) -> bool:
    """A predicate that raises on the values (a division by a zero it did not guard) counts as
    broken: the configuration is unusable either way. A predicate that cannot run at all (a
    misspelt name) is not a finding about the configuration, and stops the run."""
    try:
        return bool(c.holds(p, limits))
    except VALUE_ERRORS:
        return False


def _filter(rows: list[FunnelRow], stage: str, name: str, items: list[Params],
            keep: Callable[[Params], bool], may_empty: bool = True) -> list[Params]:
    kept = [p for p in items if keep(p)]
    return _counted(rows, stage, name, items, kept, may_empty)


def _apply(rows: list[FunnelRow], c: Constraint, limits: DeviceLimits, items: list[Params],
           may_empty: bool = True) -> list[Params]:
    """One constraint over the funnel's configurations. The predicate is called directly
    (spaces reach millions of configurations, and a wrapper per call doubles the time); only
    where it raises on some values is the list gone through again, configuration by
    configuration, so that those values count as failures."""
    holds = c.holds
    try:
        kept = [p for p in items if holds(p, limits)]
    except VALUE_ERRORS:
        kept = [p for p in items if _holds(c, p, limits)]
    return _counted(rows, c.stage, c.name, items, kept, may_empty)


def _counted(rows: list[FunnelRow], stage: str, name: str, items: list[Params],
             kept: list[Params], may_empty: bool) -> list[Params]:
    if not kept and items and not may_empty:
        rows.append(FunnelRow(stage, name, 0, len(items), "skipped: would remove all"))
        return items
    rows.append(FunnelRow(stage, name, len(items) - len(kept), len(kept)))
    return kept


#: the configurations that pass a rung's divisibility and device stages, which do not depend on
#: the problem, by (rung, limits, candidates): a plain tune asks for the same rung at several
#: shapes, and its largest space has more than a million configurations. The rung is kept in
#: the value so that its id in the key cannot be reused.
_LEGAL: dict[tuple, tuple[Rung, list[Params], list[FunnelRow]]] = {}
_LEGAL_KEPT = 4
_LEGAL_LOCK = threading.Lock()


def candidates_of(rung: Rung, only: Mapping[str, Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Each parameter's candidates, those `only` names replaced."""
    return tuple(tuple(only.get(p.name, p.candidates)) for p in rung.params)


def legal_known(rung: Rung, limits: DeviceLimits, only: Mapping[str, Sequence[int]]) -> bool:
    """Whether this process holds the rung's legal configurations for these limits already,
    so that a space of it is built here in the time its size-dependent stages take."""
    with _LEGAL_LOCK:
        return _legal_key(rung, limits, candidates_of(rung, only)) in _LEGAL


def _legal_key(rung: Rung, limits: DeviceLimits,
               candidates: tuple[tuple[int, ...], ...]) -> tuple:
    return (id(rung), limits, candidates)


def _legal(rung: Rung, limits: DeviceLimits,
           candidates: tuple[tuple[int, ...], ...]) -> tuple[list[Params], list[FunnelRow]]:
    """The divisibility and device stages of the funnel: what survives them, and their rows."""
    key = _legal_key(rung, limits, candidates)
    with _LEGAL_LOCK:  # devices tuned at once plan in threads of one process
        found = _LEGAL.get(key)
        if found is None:
            items, rows = _legal_items(rung, limits, candidates)
            while len(_LEGAL) >= _LEGAL_KEPT:
                del _LEGAL[next(iter(_LEGAL))]
            found = _LEGAL[key] = (rung, items, rows)
    _, items, rows = found
    return list(items), list(rows)


def _legal_items(rung: Rung, limits: DeviceLimits,
                 candidates: tuple[tuple[int, ...], ...]) -> tuple[list[Params], list[FunnelRow]]:
    """Every combination through the divisibility and device stages.

    The variant parameters (`Param.variant`) are added one at a time, after the rest have been
    enumerated and filtered, so a rung with several of them costs about what one without does.
    A constraint is applied as soon as it can be: an attempt that reads a parameter not yet
    there (a KeyError) waits for the next one; one that ran on every configuration read nothing
    missing, so its answer holds for every value still to come. The result is the full
    product's. Each row counts whole configurations (a configuration without its variants
    stands for every value of them)."""
    names = tuple(p.name for p in rung.params)
    variant = [i for i, p in enumerate(rung.params) if p.variant]
    fixed = [i for i in range(len(names)) if i not in variant]
    items: list[Params] = [dict(zip((names[i] for i in fixed), values))
                           for values in itertools.product(*(candidates[i] for i in fixed))]
    rows: list[FunnelRow] = []
    waiting = [c for stage in ("divisibility", "device")
               for c in rung.all_constraints() if c.stage == stage]
    missing = {names[i] for i in variant}

    def settle(items: list[Params], stands_for: int) -> list[Params]:
        nonlocal waiting
        later = []
        for c in waiting:
            step: list[FunnelRow] = []
            try:
                items = _apply(step, c, limits, items)
            except KeyError as exc:
                if not exc.args or exc.args[0] not in missing:
                    raise
                later.append(c)
                continue
            rows.extend(FunnelRow(r.stage, r.name, r.removed * stands_for, r.left * stands_for,
                                  r.note) for r in step)
        waiting = later
        return items

    items = settle(items, math.prod(len(candidates[i]) for i in variant))
    for done, i in enumerate(variant, start=1):
        name = names[i]
        items = [{**p, name: value} for p in items for value in candidates[i]]
        missing.discard(name)
        items = settle(items, math.prod(len(candidates[v]) for v in variant[done:]))
    return items, rows


def build_space(rung: Rung, limits: DeviceLimits, problem: Problem,
                heuristics: bool = True,
                extra_heuristics: Iterable[Constraint] = (),
                only: Mapping[str, Sequence[int]] | None = None,
                keep: Iterable[Mapping[str, int]] = (),
                read_b_pays: bool = False) -> SearchSpace:
    """Generate every combination of candidates and run it through the funnel.

    `only` replaces the candidates of the parameters it names (those the rung lacks are ignored),
    so a search can be focused on a region that experience or an earlier run points to; the
    funnel still checks every combination. The configurations of `keep` (what gemm() runs at
    the shape now) stay in the space whatever the heuristics say, where they pass every other
    stage: a tune that could not measure them could store one slower than them (a heuristic's
    line is a guess: "work-groups >= compute units" drops 128 tiles on 132 compute units).
    `read_b_pays` (`clgemm.configs.splits.read_b_pays` at the shape) lets that count split K
    where gemm() would for a configuration that reads B as it lies, and keeps the tiled kernel
    to such configurations where gemm() runs only those (`kept_to_reading`)."""
    only = only or {}
    names = tuple(p.name for p in rung.params)
    candidates = candidates_of(rung, only)
    generated = math.prod(len(c) for c in candidates)
    items, legal_rows = _legal(rung, limits, candidates)
    rows: list[FunnelRow] = []
    constraints = rung.all_constraints()
    if only and set(only) & set(names):
        rows.append(FunnelRow("divisibility", "candidates limited by --only: " + ", ".join(
            f"{n}={','.join(map(str, only[n]))}" for n in names if n in only), 0, generated))
    rows += legal_rows
    items += _kept_outside(rung, limits, names, candidates, keep, rows, only)
    items = _filter(rows, "size", f"M, N, K multiples of the tile ({problem.m}x{problem.n}x"
                    f"{problem.k})", items,
                    lambda p: rung.size_problem(p, problem.m, problem.n, problem.k) is None)
    if problem.batch > 1 and rung.stack_accepts is not None:
        accepts = rung.stack_accepts
        items = _filter(rows, "size", f"a batched form for a stack of {problem.batch}", items,
                        accepts)
    reading = heuristics and kept_to_reading(rung, limits, problem, read_b_pays)
    if heuristics:
        wanted = _resolved_keys(rung, names, keep)
        held = [p for p in items if tuple(p[n] for n in names) in wanted
                and (not reading or reads_b_itself(p))]
        own = [c for c in constraints if c.stage == "heuristic"]
        tiles = (tuner_heuristics(rung, limits, problem, items, read_b_pays)
                 if rung.tile_heuristics else ())
        ours = list(tiles) + list(extra_heuristics)
        for c in own + ours:
            items = _apply(rows, c, limits, items, may_empty=False)
        left = {id(p) for p in items}
        back = [p for p in held if id(p) not in left]
        if back:
            items = items + back
            rows.append(FunnelRow("heuristic", "what gemm() runs at this shape now, kept", 0,
                                  len(items), f"{len(back)} put back"))
    unknown = {c.stage for c in constraints} - set(STAGES)
    for stage in sorted(unknown):  # a stage this tuner does not know: apply it, say so
        for c in (c for c in constraints if c.stage == stage):
            items = _apply(rows, c, limits, items)
    configs = [tuple(p[n] for n in names) for p in items]
    return SearchSpace(names, candidates, configs, rows, generated,
                       reading and all(reads_b_itself(p) for p in items), dict(only))


def with_stored(space: SearchSpace, rung: Rung, limits: DeviceLimits, problem: Problem,
                configs: Iterable[Mapping[str, int]]) -> tuple[SearchSpace, int]:
    """`space` with the configurations of `configs` it lacks that pass every stage but the
    heuristics, and how many were added. A run's funnels are built before its first step is
    measured, so the entries its earlier steps store (the seeds of a later step) were not there
    to be kept: a 128 x 128 tile stored at 4096 cubed, which with K split beat every tile of
    the 768-cubed step's space, was dropped by the occupancy heuristic there. As for the
    configurations build_space keeps, a value outside the candidates is no reason to leave
    one out (a CPU's hand-made seed has such values), a value --only leaves out is."""
    names = space.names
    added: list[Config] = []
    for key in sorted(_resolved_keys(rung, names, configs)):  # a set: each key once
        if key in space:
            continue
        params = dict(zip(names, key))
        if (left_out_by_only(params, space.only)
                or rung.first_violation(params, limits) is not None
                or rung.size_problem(params, problem.m, problem.n, problem.k) is not None
                or (problem.batch > 1 and rung.stack_accepts is not None
                    and not rung.stack_accepts(params))
                or (space.reads_b_only and not reads_b_itself(params))):
            continue
        added.append(key)
    if not added:
        return space, 0
    row = FunnelRow("heuristic", "stored by this run's earlier steps, kept", 0,
                    len(space) + len(added), f"{len(added)} put back")
    return SearchSpace(names, space.candidates, space.configs + added, [*space.funnel, row],
                       space.generated, space.reads_b_only, space.only), len(added)


def _kept_outside(rung: Rung, limits: DeviceLimits, names: tuple[str, ...],
                  candidates: tuple[tuple[int, ...], ...], keep: Iterable[Mapping[str, int]],
                  rows: list[FunnelRow], only: Mapping[str, Sequence[int]]) -> list[Params]:
    """The configurations of `keep` with a value outside the candidates (a hand-made seed such
    as a CPU's register block reading operands in place), where they pass the divisibility and
    device stages: without them in the space the search could not measure them first. Those
    with a value that `only` (the caller's --only) leaves out stay out: that is a choice, not
    a gap in the candidates."""
    out: list[Params] = []
    for key in sorted(_resolved_keys(rung, names, keep)):
        if all(v in c for v, c in zip(key, candidates)):
            continue  # generated with the rest
        params = dict(zip(names, key))
        if left_out_by_only(params, only):
            continue
        if rung.first_violation(params, limits) is None:
            out.append(params)
    if out:
        rows.append(FunnelRow("device", "kept configurations outside the candidates", 0,
                              rows[-1].left + len(out) if rows else len(out),
                              f"{len(out)} added"))
    return out


def left_out_by_only(params: Mapping[str, Any], only: Mapping[str, Sequence[int]]) -> bool:
    """Whether --only (`only`) leaves out one of the values of `params`: the caller's choice,
    where a value outside the generated candidates alone is a gap in them."""
    return any(name in only and value not in only[name] for name, value in params.items())


def _resolved_keys(rung: Rung, names: tuple[str, ...],
                   configs: Iterable[Mapping[str, int]]) -> set[tuple[Any, ...]]:
    """Each configuration with the rung's defaults filled in, as a tuple in `names` order; one
    the rung refuses (a name it lacks) is left out."""
    out = set()
    for config in configs:
        try:
            full = rung.resolve(dict(config))
        except UsageError:
            continue
        out.add(tuple(full.get(n) for n in names))
    return out


def funnel_table(space: SearchSpace, title: str = "", layout: Layout = FULL) -> str:
    """The funnel as text: generated, each named step with what it removed, then what is left
    (in full, or fitted to a terminal's width as `layout` says)."""
    rows = [["generated", "", "", space.generated]]
    last_stage = None
    for r in space.funnel:
        stage = r.stage if r.stage != last_stage else ""
        last_stage = r.stage
        removed = r.note if r.note else str(r.removed)
        rows.append([stage, r.name, removed, r.left])
    rows.append(["to measure", "", "", len(space)])
    table = render(["stage", Column("constraint", wrap=40), Column("removed", right=True),
                    Column("left", right=True)], rows, layout)
    return f"{title}\n{table}" if title else table
