"""The search space and its pruning funnel, counted by hand on small spaces and a made-up
device; and the strategies' contract (valid, new, distinct proposals; full coverage; seeds)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from clgemm.core.problem import Problem
from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import Constraint, Param, Rung, get_rung
from clgemm.rungs.tiled import TILED, reads_b_itself
from clgemm.tuner.space import (SearchSpace, _apply, _legal_items, build_space, funnel_table,
                                with_stored)
from clgemm.tuner.strategies import Trial, make_strategy, strategy_names

# A made-up GPU: small work-groups and local memory, so every device step removes something.
GPU = DeviceLimits(max_work_group_size=64, max_work_item_sizes=(64, 64, 64),
                   local_mem_bytes=4096, compute_units=4, device_type="GPU")


def _removed(space: SearchSpace) -> dict[str, int]:
    return {r.name: r.removed for r in space.funnel}


def test_funnel_counts_rung3_by_hand():
    # Rung 3: TS in (8, 16, 32, 64) x WPT in (1, 2, 4, 8, 16) = 20 configurations.
    space = build_space(get_rung(3), GPU, Problem(40, 40, 40))
    rows = [(r.stage, r.name, r.removed, r.left) for r in space.funnel]
    assert space.generated == 20
    assert rows == [
        ("divisibility", "TS % WPT == 0", 1, 19),                     # TS=8, WPT=16
        ("divisibility", "parameters within their minimum values", 0, 19),
        # TS*TS/WPT <= 64: TS=16 needs WPT >= 4 (-2), TS=32 WPT=16 (-4), TS=64 never (-5)
        ("device", "work-group size <= device maximum", 11, 8),
        ("device", "work-group sides <= device maximum work-item sizes", 0, 8),
        ("device", "local memory <= device local memory", 1, 7),     # TS=32: 8 KiB > 4 KiB
        ("size", "M, N, K multiples of the tile (40x40x40)", 3, 4),   # TS=16 does not divide 40
        ("heuristic", "work-group size >= 16 on GPUs", 1, 3),         # TS=8 WPT=8: 8 items
        ("heuristic", space.funnel[7].name, 0, 3),                    # reuse: all >= 0.22
        ("heuristic", space.funnel[8].name, 0, 3),                    # registers: WPT <= 8
        ("heuristic", "work-groups >= compute units (occupancy)", 0, 3),  # 25 groups >= 4
    ]
    assert "FMA per loaded value" in space.funnel[7].name and "0.22" in space.funnel[7].name
    assert sorted(space.configs) == [(8, 1), (8, 2), (8, 4)]
    assert space.names == ("TS", "WPT")
    text = funnel_table(space, "rung 3")
    assert text.splitlines()[0] == "rung 3" and "to measure" in text
    row = next(line for line in text.splitlines() if "work-group size <= device maximum" in line)
    assert row.split()[-2:] == ["11", "8"]  # what a stage removed is a count, never negative


def test_only_replaces_candidates_and_is_reported():
    space = build_space(get_rung(3), GPU, Problem(64, 64, 64), only={"WPT": (4,), "NOPE": (1,)})
    assert space.generated == 4 and space.candidates == ((8, 16, 32, 64), (4,))
    assert {c[1] for c in space.configs} == {4}
    assert space.funnel[0].name == "candidates limited by --only: WPT=4"


def test_heuristics_off_and_never_emptying():
    rung = get_rung(3)
    off = build_space(rung, GPU, Problem(40, 40, 40), heuristics=False)
    assert len(off) == 4 and all(r.stage != "heuristic" for r in off.funnel)
    # 30 compute units: 25 work-groups are too few for every configuration, so the occupancy
    # heuristic would empty the rung; it is skipped and says so instead.
    busy = DeviceLimits(**{**GPU.__dict__, "compute_units": 30})
    space = build_space(rung, busy, Problem(40, 40, 40))
    last = space.funnel[-1]
    assert last.name.startswith("work-groups >= compute units")
    assert last.note == "skipped: would remove all" and len(space) == 3


def test_what_gemm_runs_now_survives_the_heuristics_but_not_the_hard_stages():
    """At 40 cubed rung 3 keeps TS=8 with WPT 1, 2 and 4 (the count by hand above); the
    heuristics drop TS=8 WPT=8 (8 work-items). Kept, it comes back and the funnel says so;
    TS=16 (does not divide 40) and a name the rung lacks stay out."""
    keep = [{"TS": 8, "WPT": 8}, {"TS": 16, "WPT": 4}, {"NOPE": 1}]
    space = build_space(get_rung(3), GPU, Problem(40, 40, 40), keep=keep)
    assert sorted(space.configs) == [(8, 1), (8, 2), (8, 4), (8, 8)]
    last = space.funnel[-1]
    assert (last.stage, last.left, last.note) == ("heuristic", 4, "1 put back")
    assert "to measure" in funnel_table(space)
    plain = build_space(get_rung(3), GPU, Problem(40, 40, 40), keep=[{"TS": 8, "WPT": 2}])
    assert sorted(plain.configs) == [(8, 1), (8, 2), (8, 4)]  # kept anyway: nothing put back
    assert "put back" not in plain.funnel[-1].note


BLOCKED = Rung(
    number=98, slug="blocked", title="2D blocking, for counting", adds="", file="none.cl",
    kernel="none",
    params=(Param("BM", (1, 2, 4, 8), 4, ""), Param("BN", (1, 2, 4, 8), 4, "")),
    derive=lambda p: {}, constraints=(),
    local_size=lambda p: (32 // p["BM"], 32 // p["BN"]), output_tile=lambda p: (32, 32),
    k_step=lambda p: 8, local_mem_bytes=lambda p: 0)


def _with(constraint: Constraint) -> Rung:
    """BLOCKED with one constraint of its own."""
    return Rung(**{**BLOCKED.__dict__, "constraints": (constraint,)})


def test_a_predicate_that_raises_on_some_values_removes_them():
    # 16 // (BM - 1) raises for BM=1: those four configurations fail the step with BM=4's
    # (16 // 3 is odd); BM=2 and BM=8 are kept
    rung = _with(Constraint("16 / (BM - 1) even", "divisibility",
                            lambda p, d: 16 // (p["BM"] - 1) % 2 == 0))
    space = build_space(rung, GPU, Problem(64, 64, 64), heuristics=False)
    step = next(r for r in space.funnel if r.name == "16 / (BM - 1) even")
    assert (step.removed, step.left) == (8, 8)
    assert {c[0] for c in space.configs} == {2, 8}


def test_a_predicate_that_cannot_run_stops_the_build():
    rung = _with(Constraint("misspelt", "divisibility",
                            lambda p, d: p["BM"] % undefined == 0))  # noqa: F821
    with pytest.raises(NameError):
        build_space(rung, GPU, Problem(64, 64, 64))


def test_shapes_share_the_legal_stages_but_not_their_lists():
    # a plain tune builds one rung at several shapes: the problem-free stages are worked out
    # once, and each shape's funnel is its own
    rung = get_rung(3)
    small, large = (build_space(rung, GPU, Problem(s, s, s)) for s in (40, 64))
    legal = [r for r in small.funnel if r.stage in ("divisibility", "device")]
    assert legal == [r for r in large.funnel if r.stage in ("divisibility", "device")]
    assert small.funnel[len(legal)].name.endswith("(40x40x40)")
    assert large.funnel[len(legal)].name.endswith("(64x64x64)")
    assert small.configs != large.configs and len(small) == 3
    assert build_space(rung, GPU, Problem(40, 40, 40)).configs == small.configs


def test_reuse_heuristic_by_hand():
    # FMA per loaded value = BM*BN/(BM+BN); best 8x8 = 4, so the floor is 1: BM or BN = 1
    # (7 configurations) falls below, 2x2 = 1 just makes it.
    cpu = DeviceLimits(max_work_group_size=4096, max_work_item_sizes=(4096,) * 3,
                       local_mem_bytes=1 << 20, compute_units=2, device_type="CPU")
    space = build_space(BLOCKED, cpu, Problem(64, 64, 64))
    assert _removed(space)["work-group size >= 16 on GPUs"] == 0  # a CPU
    reuse = next(r for r in space.funnel if r.name.startswith("FMA per loaded value"))
    assert (reuse.removed, reuse.left) == (7, 9) and "1.00" in reuse.name
    assert all(bm > 1 and bn > 1 for bm, bn in space.configs)


def test_register_heuristic_by_hand():
    """A GPU work-item holds its block of sums and one step's values of A and B: 16 x 16 sums
    and 32 operands (288) pass 255 registers and spill, 16 x 8 (152) fit. A CPU has no such
    line: PoCL spreads a work-group's items over vector lanes, not over registers of its own."""
    wide = Rung(**{**BLOCKED.__dict__, "params": (Param("BM", (8, 16), 8, ""),
                                                   Param("BN", (8, 16), 8, "")),
                   "local_size": lambda p: (256 // p["BM"], 256 // p["BN"]),
                   "output_tile": lambda p: (256, 256)})
    big = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024,) * 3,
                       local_mem_bytes=1 << 16, compute_units=1, device_type="GPU")
    space = build_space(wide, big, Problem(256, 256, 256))
    step = next(r for r in space.funnel if r.name.startswith("sums and one step's operands"))
    assert (step.removed, step.left) == (1, 3)
    assert (16, 16) not in space.configs and (16, 8) in space.configs
    cpu = DeviceLimits(**{**big.__dict__, "device_type": "CPU"})
    assert (16, 16) in build_space(wide, cpu, Problem(256, 256, 256)).configs


# -- strategies ------------------------------------------------------------------------------

def _synthetic_space() -> SearchSpace:
    cands = ((1, 2, 4, 8, 16), (1, 2, 4, 8), (0, 1, 2))
    configs = [(a, b, c) for a in cands[0] for b in cands[1] for c in cands[2] if a >= b]
    return SearchSpace(("A", "B", "C"), cands, configs)


def _score(c) -> float | None:
    a, b, c3 = c
    return None if (a, b) == (16, 1) else float(a * b + c3)


def _drive(name: str, space: SearchSpace, seed: int, n: int = 3, limit: int = 10_000):
    strategy, rng, history, order = make_strategy(name), random.Random(seed), [], []
    for _ in range(limit):
        batch = strategy.propose(space, history, rng, n)
        if not batch:
            break
        done = {t.config for t in history}
        assert 0 < len(batch) <= n and len(set(batch)) == len(batch)
        assert all(c in space.index and c not in done for c in batch)
        for c in batch:
            history.append(Trial(c, _score(c)))
            order.append(c)
    return order


@pytest.mark.parametrize("name", strategy_names())
def test_strategy_contract(name):
    space = _synthetic_space()
    order = _drive(name, space, seed=1)
    assert sorted(order) == sorted(space.configs)  # everything, once, then []
    assert _drive(name, space, seed=1) == order  # a seed fixes the sequence
    if name == "exhaustive":
        assert order == space.configs


@pytest.mark.parametrize("name", ["annealing", "genetic"])
def test_strategy_resumes_from_history_it_did_not_make(name):
    space = _synthetic_space()
    history = [Trial(c, _score(c)) for c in space.configs[:15]]
    batch = make_strategy(name).propose(space, history, random.Random(0), 4)
    assert batch and all(c not in space.configs[:15] for c in batch)


def test_strategy_names_and_unknown():
    assert strategy_names() == ["exhaustive", "random", "annealing", "genetic"]
    from clgemm.core.errors import UsageError

    with pytest.raises(UsageError, match="unknown"):
        make_strategy("hillclimb")


@pytest.mark.parametrize("name", ["annealing", "genetic"])
def test_history_beyond_int64_does_not_stop_a_search(name):
    """A trial read from an edited journal may hold any integer; the distances the strategies
    search by treat a value no configuration has as different from all of them."""
    space = _synthetic_space()
    huge = (10 ** 30,) + space.configs[0][1:]
    assert list(space.hamming(huge)) == [1 + sum(a != b for a, b in zip(c[1:], huge[1:]))
                                         for c in space.configs]
    history = [Trial(huge, 1e9)] + [Trial(c, _score(c)) for c in space.configs[:3]]
    batch = make_strategy(name).propose(space, history, random.Random(0), 4)
    assert batch and all(c in space.index for c in batch)


def test_variant_parameters_give_the_full_products_space():
    """The tiled kernel's variants (PIPELINE, WARP_M, RASTER) are added after the rest is
    filtered; the configurations kept and the funnel's counts must be those of filtering the
    whole product, on a GPU that takes cp.async and on a CPU."""
    only = {"TSM": (64, 128), "TSN": (64, 128), "TSK": (16, 32), "WPTM": (8,), "WPTN": (8, 16),
            "VWM": (1, 8), "VWN": (4,), "CACHE_A": (0, 1), "CACHE_B": (1,), "PANELS": (0,),
            "LOCKSTEP": (0,)}
    candidates = tuple(tuple(only.get(p.name, p.candidates)) for p in TILED.params)
    names = [p.name for p in TILED.params]
    for limits in (DeviceLimits(local_mem_bytes=48 * 1024, compute_capability="9.0"),
                   DeviceLimits(device_type="CPU", local_mem_bytes=1 << 20)):
        kept, rows = _legal_items(TILED, limits, candidates)
        whole = [dict(zip(names, v)) for v in itertools.product(*candidates)]
        for c in TILED.all_constraints():
            if c.stage in ("divisibility", "device"):
                whole = _apply([], c, limits, whole)
        as_tuples = sorted(tuple(p[n] for n in names) for p in kept)
        assert as_tuples == sorted(tuple(p[n] for n in names) for p in whole)
        assert any(p["PIPELINE"] for p in kept) == (limits.device_type == "GPU")
        assert sum(r.removed for r in rows) + len(kept) == math.prod(map(len, candidates))


def test_occupancy_counts_the_slices_of_k_gemm_runs_the_tiled_kernel_in():
    """At a long K with few tiles of C, gemm() splits K for the tiled kernel, and the tiles
    times the slices are what fills the device: the occupancy heuristic counts them, so
    configurations that gemm() would run well split are measured. At a short K nothing is
    split and the tiles alone count."""
    from clgemm.tuner.space import tuner_heuristics

    big = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                       local_mem_bytes=48 * 1024, compute_units=132, device_type="GPU")
    params = TILED.resolve({"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4})
    occupancy = {k: next(c for c in tuner_heuristics(TILED, big, Problem(4096, 64, k), [params])
                         if c.name.startswith("work-groups"))
                 for k in (4096, 256)}
    assert occupancy[4096].holds(params, big)       # 64 tiles x 8 slices of 512
    assert not occupancy[256].holds(params, big)    # 64 tiles, no split


def test_a_configuration_stored_after_the_funnel_joins_the_space_as_a_kept_one_would():
    """A run builds its funnels before its first step: what an earlier step stores comes in at
    the later step as `keep` would have brought it (TS=8 WPT=8, dropped by the heuristics at 40
    cubed; TS=4, outside the candidates), and what keep would refuse stays out: TS=16 does not
    divide 40, a name the rung lacks, a value --only left out of the candidates."""
    rung, problem = get_rung(3), Problem(40, 40, 40)
    space = build_space(rung, GPU, problem)
    stored = [{"TS": 8, "WPT": 8}, {"TS": 16, "WPT": 4}, {"NOPE": 1}, {"TS": 8, "WPT": 2},
              {"TS": 4, "WPT": 4}]
    grown, added = with_stored(space, rung, GPU, problem, stored)
    assert added == 2 and sorted(grown.configs) == [(4, 4), (8, 1), (8, 2), (8, 4), (8, 8)]
    assert (grown.funnel[-1].left, grown.funnel[-1].note) == (5, "2 put back")
    assert (8, 8) not in space  # the space it was made from is left as it was
    only = build_space(rung, GPU, problem, only={"WPT": (1, 2, 4)})
    grown_only, added = with_stored(only, rung, GPU, problem, stored)
    assert added == 1 and (4, 4) in grown_only and (8, 8) not in grown_only
    for given in ({}, {"WPT": (1, 2, 4)}, {"TS": (8,)}):
        kept = build_space(rung, GPU, problem, only=given, keep=stored)
        late, _ = with_stored(build_space(rung, GPU, problem, only=given), rung, GPU, problem,
                              stored)
        assert sorted(kept.configs) == sorted(late.configs), given


def test_a_kept_configuration_outside_the_candidates_joins_the_space():
    """A seed with values no candidate list holds (a CPU's hand-made register block) is in the
    space where it passes the hard stages, so that the search can measure it first; one the
    device cannot run stays out; the funnel says how many came in."""
    rung = get_rung(3)
    keep = [{"TS": 20, "WPT": 10}, {"TS": 20, "WPT": 1}]  # 20 x 2 work-items; 20 x 20: too many
    assert rung.first_violation({"TS": 20, "WPT": 1}, GPU) is not None
    space = build_space(rung, GPU, Problem(40, 40, 40), keep=keep)
    assert (20, 10) in space and (20, 1) not in space
    assert any(r.note == "1 added" for r in space.funnel)
    assert (20, 10) not in build_space(rung, GPU, Problem(40, 40, 40))


def test_a_kept_configuration_outside_only_stays_out():
    """--only is the caller's choice, not a gap in the candidates: a seed with a value it
    leaves out (what gemm() runs now, with a pipeline where the search asks for none) is not
    measured, and one within it still joins the space."""
    rung = get_rung(3)
    keep = [{"TS": 20, "WPT": 10}]
    assert (20, 10) in build_space(rung, GPU, Problem(40, 40, 40), keep=keep,
                                   only={"WPT": (10,)})
    assert (20, 10) not in build_space(rung, GPU, Problem(40, 40, 40), keep=keep,
                                       only={"TS": (8, 16)})


def test_groups_count_the_split_of_a_configuration_that_reads_b():
    """At 32 x 4096 x 4096 a 32 x 64 tile leaves 64 groups for 132 compute units; gemm() splits
    K for a configuration that reads B as it lies (no pipeline) where reading B pays, so the
    occupancy heuristic keeps it there, and drops it where B would be packed (no split on so
    few rows)."""
    h100 = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                        local_mem_bytes=227 * 1024, compute_units=132, device_type="GPU",
                        compute_capability="9.0")
    one = {"TSM": (32,), "TSN": (16, 64), "TSK": (32,), "WPTM": (4,), "WPTN": (8,), "WIDTH": (4,),
           "VWM": (2,), "VWN": (8,), "PIPELINE": (0,), "WARP_M": (0,), "RASTER": (0,),
           "KSPLIT": (1,)}
    problem = Problem(32, 4096, 4096)
    reading = build_space(TILED, h100, problem, only=one, read_b_pays=True)
    packing = build_space(TILED, h100, problem, only=one, read_b_pays=False)
    # TSN = 16 leaves 256 groups either way; each configuration with UNROLL_K 0 and 1
    assert sorted(reading.params(c)["TSN"] for c in reading.configs) == [16, 16, 64, 64]
    assert sorted(packing.params(c)["TSN"] for c in packing.configs) == [16, 16]


def test_where_reading_b_pays_a_gpus_space_keeps_what_reads_it():
    """Where reading B as it lies pays, gemm() runs only tiled configurations that read B (a
    pipeline would run behind a pack at every call): a GPU's space keeps the tiled kernel to
    those there, and says so, and to everything elsewhere; a CPU's keeps everything (its
    panels pack anyway)."""
    h100 = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                        local_mem_bytes=227 * 1024, compute_units=132, device_type="GPU",
                        compute_capability="9.0")
    cpu = DeviceLimits(max_work_group_size=4096, max_work_item_sizes=(4096, 4096, 4096),
                       local_mem_bytes=4 * 1024 * 1024, compute_units=2, device_type="CPU")
    some = {"TSM": (64,), "TSN": (64,), "TSK": (16,), "WPTM": (8,), "WPTN": (8,), "WIDTH": (4,),
            "VWM": (2,), "VWN": (4,), "PIPELINE": (0, 2), "WARP_M": (0,), "RASTER": (0,)}
    problem = Problem(512, 512, 512)

    def pipelines(space: SearchSpace) -> set[int]:
        return {space.params(c)["PIPELINE"] for c in space.configs}

    reading = build_space(TILED, h100, problem, only=some, heuristics=True, read_b_pays=True)
    assert reading.configs and pipelines(reading) == {0}
    assert all(reads_b_itself(reading.params(c)) for c in reading.configs)
    assert "reads B as it lies" in reading.funnel[-6].name
    assert reading.reads_b_only
    long_k = build_space(TILED, h100, Problem(512, 512, 16384), only=some, read_b_pays=True)
    assert pipelines(long_k) == {0} and long_k.reads_b_only
    packing = build_space(TILED, h100, Problem(512, 512, 16384), only=some, read_b_pays=False)
    assert pipelines(packing) == {0, 2} and not packing.reads_b_only
    kept = build_space(TILED, h100, problem, only=some, read_b_pays=True,
                       keep=[reading.params(reading.configs[0]) | {"PIPELINE": 2}])
    assert pipelines(kept) == {0}  # what gemm() would not run there is not put back
    assert pipelines(build_space(TILED, h100, problem, only=some, read_b_pays=False)) == {0, 2}
    stack = Problem(512, 512, 512, batch=10)
    stacked = build_space(TILED, h100, stack, only=some, read_b_pays=True)
    assert not any("reads B as it lies" in r.name for r in stacked.funnel)
    on_cpu = build_space(TILED, cpu, problem, only=some, read_b_pays=True)
    assert not any("reads B as it lies" in r.name for r in on_cpu.funnel)


def test_the_workspace_check_asks_one_configuration_per_helper_set():
    """`helper_configs` gives the tiled kernel's space a few configurations, yet the workspace
    they need is the one every configuration of the space needs; a rung without extra helpers
    gives its defaults alone."""
    from clgemm.measure.rung_runner import workspace_buffers
    from clgemm.tuner.shape_tune import helper_configs

    cpu = DeviceLimits(max_work_group_size=4096, max_work_item_sizes=(4096,) * 3,
                       local_mem_bytes=64 * 1024, compute_units=8, device_type="CPU")
    problem = Problem(512, 512, 512)
    some = {"TSK": (16,), "WPTM": (8,), "WPTN": (8,), "WIDTH": (4,), "VWM": (4,), "VWN": (4,),
            "PIPELINE": (0,), "WARP_M": (0,), "RASTER": (0,)}
    space = build_space(TILED, cpu, problem, only=some, read_b_pays=False)
    every = [space.params(c) for c in space.configs]
    assert {p["PANELS"] for p in every} == {0, 1} and len(every) > 50
    few = helper_configs(TILED, space)
    assert len(few) < len(every) / 3
    assert (sorted(workspace_buffers(problem, [(TILED, p) for p in few]))
            == sorted(workspace_buffers(problem, [(TILED, p) for p in every])))
    firsts = space.firsts_by(("PANELS", "TSM", "TSN"))
    assert len({(p["PANELS"], p["TSM"], p["TSN"]) for p in map(space.params, firsts)}) == len(
        firsts) == len({(p["PANELS"], p["TSM"], p["TSN"]) for p in every})
    rung6 = get_rung(6)
    assert helper_configs(rung6, build_space(rung6, cpu, problem)) == [rung6.defaults()]


def test_groups_are_cut_into_slices_of_k_only_where_the_tiles_leave_units_few_groups():
    """At 512 cubed, 32 x 32 tiles give the 132 units 256 groups, under four each: the search
    keeps their slices of K; at 4096 cubed (16,384 groups) only whole groups are left."""
    h100 = DeviceLimits(max_work_group_size=1024, max_work_item_sizes=(1024, 1024, 64),
                        local_mem_bytes=227 * 1024, compute_units=132, device_type="GPU",
                        compute_capability="9.0")
    one = {"TSM": (32,), "TSN": (32,), "TSK": (8,), "WPTM": (4,), "WPTN": (8,), "WIDTH": (4,),
           "VWM": (4,), "VWN": (4,), "PIPELINE": (0,), "WARP_M": (0,), "RASTER": (0,),
           "UNROLL_K": (0,)}
    small = build_space(TILED, h100, Problem(512, 512, 512), only=one)
    large = build_space(TILED, h100, Problem(4096, 4096, 4096), only=one)
    assert sorted(small.params(c)["KSPLIT"] for c in small.configs) == [1, 2, 4]
    assert [large.params(c)["KSPLIT"] for c in large.configs] == [1]
