"""The seeds a rung's search measures first: the default, the stored configurations, then each of
the first stored ones with one variant parameter set otherwise, so that a kernel option added
after they were stored is tried on them before the strategy strays (but not on a seed far
behind the best), and each of those with the variants that helped it made together."""

from __future__ import annotations

import dataclasses
import io
import itertools
import random
from pathlib import Path
from types import SimpleNamespace

from made_up import GPU

from clgemm.configs import lookup
from clgemm.rungs.base import Param
from clgemm.rungs.tiled import TILED
from clgemm.rungs.tiled_any import TILED_ANY
from clgemm.tuner import plan
from clgemm.tuner.rung_tune import VARIANT_SEEDS, RungOutcome, TuneOptions, _Search
from clgemm.tuner.space import Config, SearchSpace
from clgemm.tuner.strategies import make_strategy
from clgemm.tuner.strategies.base import Trial

PARAMS = (Param("T", (8, 16, 32), 16, "a tile"), Param("R", (0, 8), 0, "an order", minimum=0,
                                                         variant=True),
          Param("U", (0, 1), 0, "an unrolling", minimum=0, variant=True))


def _search(seeds, measured=()):
    names = tuple(p.name for p in PARAMS)
    candidates = tuple(p.candidates for p in PARAMS)
    configs = [c for c in itertools.product(*candidates) if c != (32, 8, 1)]  # one left out
    space = SearchSpace(names, candidates, configs)
    search = _Search(rung=SimpleNamespace(params=PARAMS), space=space, journal=None,
                     evaluator=None, options=TuneOptions(seeds=tuple(seeds)), ref=0, out=None)
    search.measured = set(measured)
    return search


def test_the_first_stored_seeds_are_followed_by_their_variants():
    stored = [dict(T=32, R=0, U=0), dict(T=8, R=8, U=0), dict(T=16, R=0, U=1)]
    order = _search(stored).seeds((16, 0, 0))
    assert order[:4] == [(16, 0, 0), (32, 0, 0), (8, 8, 0), (16, 0, 1)]
    # variants of the default and of the first VARIANT_SEEDS stored ones, in the space, not
    # seeds already, each once; (32, 8, 1) is not in the space
    assert VARIANT_SEEDS == 2
    assert order[4:] == [(16, 8, 0), (32, 8, 0), (32, 0, 1), (8, 0, 0), (8, 8, 1)]


def test_measured_configurations_are_not_proposed_again():
    order = _search([dict(T=32, R=0, U=0)], measured={(32, 0, 1)}).seeds((16, 0, 0))
    assert (32, 0, 1) not in order and (32, 8, 0) in order


def test_a_seeds_helpful_variants_are_combined_once_all_are_measured():
    """Each change that made a base faster on its own is made at once, each parameter at its
    fastest value, once the base's variants are all measured; once per base, and only where
    two changes or more helped and the space holds the result."""
    search = _search([dict(T=32, R=0, U=0)])
    assert search.seeds((16, 0, 0)) == [(16, 0, 0), (32, 0, 0), (16, 8, 0), (16, 0, 1),
                                        (32, 8, 0), (32, 0, 1)]
    search.history = [Trial((16, 0, 0), 10.0), Trial((16, 8, 0), 12.0)]
    assert search.combined() == []  # (16, 0, 1) is not measured yet
    search.history.append(Trial((16, 0, 1), 11.0))
    assert search.combined() == [(16, 8, 1)]
    assert search.combined() == []  # once for the default
    # the stored seed: both changes helped, but the space leaves (32, 8, 1) out
    search.history += [Trial((32, 0, 0), 10.0), Trial((32, 8, 0), 11.0), Trial((32, 0, 1), 12.0)]
    assert search.combined() == []
    one = _search([])
    one.seeds((16, 0, 0))
    one.history = [Trial((16, 0, 0), 10.0), Trial((16, 8, 0), 12.0), Trial((16, 0, 1), None)]
    assert one.combined() == []  # one change helped, and a failure is no help


def _run(speed: dict, seeds: list, budget: int) -> tuple[list, _Search]:
    """The configurations a run of the made-up rung measures, in order, at `speed`, and the
    search that measured them."""
    measured: list[Config] = []

    class Made:
        def prebuild(self, ref, configs):
            pass

        def evaluate(self, ref, params):
            key = (params["T"], params["R"], params["U"])
            measured.append(key)
            return {"status": "ok", "gflops": speed.get(key, 1.0), "ms": 1.0}

    class Kept:
        def append(self, record, keep=True):
            pass

    search = _search(seeds)
    search.rung = SimpleNamespace(params=PARAMS, number=0)
    search.journal, search.evaluator = Kept(), Made()
    search.options = TuneOptions(seeds=tuple(seeds), budget=budget, batch=1)
    search.out = RungOutcome(0, "made up", len(search.space), "random")
    search.run(make_strategy("random"), random.Random(0), search.seeds((16, 0, 0)),
               io.StringIO())
    return measured, search


def test_the_combination_is_measured_before_the_strategy_strays():
    """In a run, the combination of a base's helpful variants is measured as soon as they
    are, ahead of anything the strategy proposes; here it is the fastest configuration."""
    speed = {(16, 0, 0): 10.0, (16, 8, 0): 12.0, (16, 0, 1): 11.0, (16, 8, 1): 20.0}
    measured, search = _run(speed, [], 6)
    assert measured[:4] == [(16, 0, 0), (16, 8, 0), (16, 0, 1), (16, 8, 1)]
    assert max(search.history, key=lambda t: t.score or 0).config == (16, 8, 1)


def test_the_variants_of_a_seed_far_behind_the_best_are_not_measured():
    """The default measures a tenth of the stored seed's speed: its variants are dropped
    from the queue once the seed is measured, and the seed's own come next."""
    slow = {(16, 0, 0): 1.0, (32, 0, 0): 10.0, (32, 8, 0): 11.0, (32, 0, 1): 9.0}
    assert _run(slow, [dict(T=32, R=0, U=0)], 4)[0] == [(16, 0, 0), (32, 0, 0), (32, 8, 0),
                                                          (32, 0, 1)]
    # at over half the best, the default's variants are measured as before
    close = {**slow, (16, 0, 0): 6.0}
    assert _run(close, [dict(T=32, R=0, U=0)], 4)[0] == [(16, 0, 0), (32, 0, 0), (16, 8, 0),
                                                           (16, 0, 1)]


def test_a_register_vectors_width_is_tried_on_the_seeds_too():
    """A parameter that says how wide a work-item's register reads are (`read_width`), not
    what it computes, is set otherwise on the first seeds as a variant is; a tile is not."""
    params = (Param("T", (8, 16), 8, "a tile"), Param("V", (1, 2, 4), 1, "a vector width",
                                                     read_width=True))
    names = tuple(p.name for p in params)
    candidates = tuple(p.candidates for p in params)
    space = SearchSpace(names, candidates, list(itertools.product(*candidates)))
    search = _Search(rung=SimpleNamespace(params=params), space=space, journal=None,
                     evaluator=None, options=TuneOptions(seeds=(dict(T=16, V=2),)), ref=0,
                     out=None)
    search.measured = set()
    assert search.seeds((8, 1)) == [(8, 1), (16, 2), (8, 2), (8, 4), (16, 1), (16, 4)]


def test_the_kernel_for_any_size_starts_from_the_tiled_kernels_tiles_too(stored, monkeypatch):
    """A search of the kernel for any size measures, after its own first stored configuration,
    the tiled kernel's best stored ones near the shape, whether their tiles divide it or not,
    without the tiled kernel's order of work-items; a configuration of its CPU forms (panels)
    is left out, as the kernel for any size has none."""
    def found(rung, params, shape, gflops):
        return lookup.Found(rung.number, rung.resolve(params), "tuned", "tuned", shape, gflops,
                            Path("made-up.json"))

    tiles = {"TSM": 128, "TSN": 128, "TSK": 8, "WPTM": 8, "WPTN": 8, "VWM": 2, "VWN": 8}
    stored[TILED.number] = [found(TILED, {**tiles, "RASTER": 8, "UNROLL_K": 1, "WARP_M": 4},
                                  (1024, 1024, 1024), 39000.0),
                            found(TILED, {**tiles, "PANELS": 1, "CACHE_A": 0, "CACHE_B": 0},
                                  (1024, 1024, 1024), 50000.0)]
    stored[TILED_ANY.number] = [found(TILED_ANY, {"TSM": 64, "TSN": 64}, (4096, 4096, 4096),
                                      30000.0)]
    monkeypatch.setattr(lookup, "other_backends", lambda *args, **kw: [])
    seeds = plan.seeds(GPU, TILED_ANY, (1000, 1000, 1000))
    assert seeds[0] == stored[TILED_ANY.number][0].params
    assert seeds[1] == TILED_ANY.resolve({**tiles, "RASTER": 8, "UNROLL_K": 1})
    assert len(seeds) == 2
    # the tiled kernel's own search starts from its own configurations alone (and the first
    # with its groups cut along K: `sliced_groups`)
    whole = [p for p in plan.seeds(GPU, TILED, (1024, 1024, 1024)) if p["KSPLIT"] == 1]
    assert sorted(map(str, whole)) == sorted(str(f.params) for f in stored[TILED.number])


def _only_stored(stored, monkeypatch, block, shape, gflops):
    """The tiled kernel's one stored configuration, at `shape`; nothing under other backends."""
    stored[TILED.number] = [lookup.Found(TILED.number, TILED.resolve(block), "tuned", "tuned",
                                         shape, gflops, Path("made-up.json"))]
    monkeypatch.setattr(lookup, "other_backends", lambda *args, **kw: [])


def test_a_gpu_tune_of_a_large_product_tries_the_first_seed_with_a_larger_register_block(
        stored, monkeypatch):
    """After the stored configurations, the first one with twice the sums per work-item along
    M or N (the group as it was or twice as large, the reads as wide or twice as wide): at
    4096 cubed every one of the eight gives the 132 units two work-groups each; at 1024 cubed
    none does, and none is added; a CPU's tune never adds them."""
    block = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8, "VWM": 2, "VWN": 4,
             "PIPELINE": 2}
    _only_stored(stored, monkeypatch, block, (4096, 4096, 4096), 50000.0)
    seeds = plan.seeds(GPU, TILED, (4096, 4096, 4096))
    assert seeds[0] == TILED.resolve(block) and len(seeds) == 9
    grown = {(p["TSM"], p["TSN"], p["WPTM"], p["WPTN"], p["VWM"], p["VWN"]) for p in seeds[1:]}
    assert grown == {(128, 64, 16, 8, 2, 4), (128, 64, 16, 8, 4, 4), (128, 128, 16, 8, 2, 4),
                     (128, 128, 16, 8, 4, 4), (64, 128, 8, 16, 2, 4), (64, 128, 8, 16, 2, 8),
                     (128, 128, 8, 16, 2, 4), (128, 128, 8, 16, 2, 8)}
    assert all(p["TSK"] == 16 and p["PIPELINE"] == 2 for p in seeds[1:])
    at_1024 = plan.seeds(GPU, TILED, (1024, 1024, 1024))
    assert at_1024[0] == TILED.resolve(block) and not any(p in at_1024 for p in seeds[1:])
    on_cpu = plan.seeds(dataclasses.replace(GPU, type="CPU"), TILED, (4096, 4096, 4096))
    assert TILED.resolve(block) in on_cpu and not any(p in on_cpu for p in seeds[1:])


def test_a_cpu_tune_starts_from_what_is_stored_then_from_its_hand_made_forms(
        stored, monkeypatch):
    """What the chain would run comes first, so that the seeds whose variants are measured
    are those measured fastest near the shape; a CPU's hand-made forms follow, and with
    nothing stored they lead. The self-packing form's pieces are as wide as the CPU's
    vectors."""
    from clgemm.devices.hardware import cpu_vector_floats
    from clgemm.rungs.tiled import CPU_IN_PLACE, CPU_MICRO_KERNEL, cpu_self_packing

    cpu = dataclasses.replace(GPU, type="CPU")
    block = {"TSM": 16, "TSN": 32, "TSK": 32, "WPTM": 16, "WPTN": 4, "VWM": 8, "CACHE_A": 0,
             "CACHE_B": 0, "PANELS": 1}
    _only_stored(stored, monkeypatch, block, (1024, 1024, 1024), 80.0)
    packing = cpu_self_packing(cpu_vector_floats(cpu.name))
    assert packing["VWM"] == packing["WPTM"] == packing["WPTN"] == cpu_vector_floats(cpu.name)
    hand = [TILED.resolve(p) for p in (CPU_MICRO_KERNEL, CPU_IN_PLACE, packing)]
    assert plan.seeds(cpu, TILED, (2048, 2048, 2048))[:4] == [TILED.resolve(block), *hand]
    stored[TILED.number] = []
    assert plan.seeds(cpu, TILED, (2048, 2048, 2048)) == hand


def test_a_tune_measures_every_level_s_configuration_at_its_own_slot(stored, monkeypatch):
    """A configuration another device stored at the very shape being tuned is measured among
    the first, however many faster ones stand ahead of it: the entry the tune stores there
    outranks it on this device, and may only do so having been measured against it."""
    def found(level, tsm, shape, gflops, raster=0):
        params = TILED.resolve({"TSM": tsm, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 8,
                                "RASTER": raster})
        return lookup.Found(TILED.number, params, level, level, shape, gflops,
                            Path("made-up.json"))

    here = (4096, 4096, 4096)
    others = [found("family", 64, (4096, 4096, 4096 - 32 * i), 60000.0 - i, 2 * i)
              for i in range(1, 8)]
    own, theirs = found("tuned", 32, here, 40000.0), found("family", 128, here, 50000.0)
    stored[TILED.number] = [own, *others, theirs]
    monkeypatch.setattr(lookup, "other_backends", lambda *args, **kw: [])
    seeds = plan.seeds(GPU, TILED, here)
    assert seeds[0] == lookup.ranked(GPU, TILED, here)[0].params == others[0].params
    assert seeds[1:3] == [own.params, theirs.params]
    assert others[-1].params not in seeds


def test_a_gpu_tune_of_a_small_product_tries_the_first_seed_with_its_groups_cut_along_k(
        stored, monkeypatch):
    """Where the first seed's tiles of C, or its tiles halved, give the 132 units fewer than
    four work-groups each, the tune also tries it with 2 and 4 slices of K per group: at 512
    cubed all four, through local memory without a pipeline; at 4096 cubed none; never on a
    CPU, whose compute units run whole groups one after another."""
    block = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 8, "VWM": 4, "VWN": 4,
             "PIPELINE": 2}
    _only_stored(stored, monkeypatch, block, (512, 512, 512), 20000.0)
    seeds = plan.seeds(GPU, TILED, (512, 512, 512))
    cut = [(p["TSM"], p["TSN"], p["KSPLIT"]) for p in seeds if p["KSPLIT"] > 1]
    assert cut == [(64, 64, 2), (64, 64, 4), (32, 32, 2), (32, 32, 4)]
    assert all(p["PIPELINE"] == 0 and p["CACHE_A"] == p["CACHE_B"] == 1 and p["WPTM"] == 4
               for p in seeds if p["KSPLIT"] > 1)
    assert not any(p["KSPLIT"] > 1 for p in plan.seeds(GPU, TILED, (4096, 4096, 4096)))
    on_cpu = plan.seeds(dataclasses.replace(GPU, type="CPU"), TILED, (512, 512, 512))
    assert not any(p["KSPLIT"] > 1 for p in on_cpu)


def test_the_models_seeds_are_measured_on_gpus_only(monkeypatch):
    """On a CPU the model's highest-bound configurations measured a few percent of each step's
    best (results/pocl/model-seeds): a CPU's plain tune starts from what is stored alone."""
    picked = [{"TSM": 64}]
    monkeypatch.setattr(plan, "bound_seeds", lambda *args, **kw: picked)
    space = SimpleNamespace()
    assert plan.model_seeds(GPU, TILED, space, (2048, 2048, 2048)) == picked
    cpu = dataclasses.replace(GPU, type="CPU")
    assert plan.model_seeds(cpu, TILED, space, (2048, 2048, 2048)) == []
