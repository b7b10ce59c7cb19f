"""The direct/indirect crossover as a value of the device, from what the lookup holds: the
default of the device type without both kinds, the smallest packing win alone, or the geometric
mean between the largest shape the direct kernel was tuned at and that win; and the kernel
chosen on either side of it. No device: the lookup's answers are made up."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from made_up import GPU

from clgemm.backends import Mat
from clgemm.configs import choice, lookup, splits
from clgemm.configs.configuration import Config
from clgemm.devices.hardware import hardware_for_device
from clgemm.library.plan import new_plan
from clgemm.rungs import get_rung
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.skinny import SKINNY
from clgemm.rungs.tiled_any import TILED_ANY

TILED = get_rung(12)


def _found(rung, shape: int, gflops: float) -> lookup.Found:
    return lookup.Found(rung.number, rung.defaults(), "tuned", "tuned", (shape,) * 3, gflops,
                        Path("made-up.json"))


def _only_what_fits(stored, monkeypatch) -> None:
    """The lookup made to hand out, as it does, only the configurations that divide the shape
    it is asked about (all of them where it is asked about none)."""
    def fitting(device, rung, shape, roots=None):
        return [f for f in stored.get(rung.number, []) if shape is None
                or rung.size_problem(rung.resolve(dict(f.params)), *shape) is None]

    monkeypatch.setattr(lookup, "candidates", fitting)


def test_without_both_kinds_the_type_default(stored):
    assert choice.crossover(GPU) == choice.Crossover(choice.DIRECT_BELOW["GPU"],
                                                     "default for a GPU")
    stored[TILED.number] = [_found(TILED, 1024, 30000.0)]
    assert choice.crossover(GPU).source.startswith("default")


def test_with_no_direct_kernel_stored_a_packing_shape_below_the_default_is_the_crossover(stored):
    """A tune of the tiled kernel alone at 512 cubed: 512 cubed runs on its entry, not on the
    direct kernel's defaults, and a smaller product keeps the direct kernel's one launch."""
    stored[TILED.number] = [_found(TILED, 512, 14000.0), _found(TILED, 4096, 45000.0)]
    cross = choice.crossover(GPU)
    assert cross.min_indirect == 512**3 and not cross.source.startswith("default")
    assert choice.choose_kernel(GPU, (512, 512, 512), cross=cross).rung == TILED.number
    assert choice.choose_kernel(GPU, (256, 256, 256), cross=cross).rung == DIRECT.number
    stored[3] = [_found(get_rung(3), 128, 4.7)]  # a course rung moves nothing
    assert choice.crossover(GPU).min_indirect == 512**3


def test_between_the_direct_kernels_shape_and_the_first_packing_win(stored):
    stored[DIRECT.number] = [_found(DIRECT, 768, 13000.0)]
    # 64 x 64 tiles: 256 work-groups at 1024 cubed, K whole where it was measured
    stored[TILED.number] = [_found_at(TILED, (1024,) * 3, 33000.0, TSM=64, TSN=64, WPTM=4),
                            _found(TILED, 4096, 45000.0)]
    cross = choice.crossover(GPU)
    assert cross.source == "measured"
    assert cross.min_indirect == int((768**3 * 1024**3) ** 0.5)
    assert choice.choose_kernel(GPU, (800, 800, 800), cross=cross).rung == DIRECT.number
    assert choice.choose_kernel(GPU, (1000, 1000, 1000), cross=cross).rung == TILED.number


def test_a_packing_win_below_every_direct_shape_is_the_crossover(stored):
    stored[DIRECT.number] = [_found(DIRECT, 2048, 1000.0)]
    stored[TILED.number] = [_found(TILED, 512, 20000.0)]
    assert choice.crossover(GPU) == choice.Crossover(512**3, "measured")


def test_no_crossover_sends_every_size_to_the_packing_kernels(stored):
    stored[DIRECT.number] = [_found(DIRECT, 64, 1000.0)]
    cross = choice.no_crossover(GPU)
    assert choice.choose_kernel(GPU, (64, 64, 64), cross=cross).rung != DIRECT.number


def test_split_of_k_fills_the_device_with_a_few_groups_per_unit():
    """A skinny product (few tiles of C, a long K) is split into a power of two of slices that
    divide K, no slice shallower than MIN_SLICE; a square one of many tiles is not split."""
    params = DIRECT.defaults()  # 64 x 64 tiles of C
    assert choice.split_of(GPU, params, (4096, 16, 4096)) == 8  # 64 tiles x 8 <= 4 x 132
    assert choice.split_of(GPU, params, (256, 256, 16384)) == 32  # 16 tiles x 32 = 512
    assert choice.split_of(GPU, params, (4096, 4096, 4096)) == 1
    assert choice.split_of(GPU, params, (64, 64, 2560)) == 8  # 2560 / 16 = 160 < MIN_SLICE
    assert choice.split_of(GPU, params, (64, 64, 4097)) == 1  # odd K: no equal slices
    assert choice.split_of(GPU, params, (64, 64, 1024)) == 1  # too short to repay a launch


def test_skinny_products_above_the_crossover_run_split(stored):
    """Above the crossover a skinny product runs with K split: on the tiled kernel padded to
    its tiles where its useful share still beats the direct kernel (64 columns of 128), on the
    direct kernel where padding wastes too much of it (16 of 128)."""
    stored[DIRECT.number] = [_found(DIRECT, 768, 13000.0)]
    stored[TILED.number] = [_found(TILED, 1024, 33000.0), _found(TILED, 4096, 45000.0)]
    cross = choice.crossover(GPU)
    wide = choice.choose_kernel(GPU, (4096, 64, 4096), cross=cross)
    assert wide.rung == TILED.number and choice.split_for(GPU, wide, (4096, 64, 4096)) > 1
    thin = choice.choose_kernel(GPU, (4096, 16, 4096), cross=cross)
    assert thin.rung == DIRECT.number and choice.split_for(GPU, thin, (4096, 16, 4096)) > 1
    assert choice.choose_kernel(GPU, (2048, 2048, 2048), cross=cross).rung == TILED.number


def test_long_k_at_multiples_of_the_tiles_runs_split_on_the_tiled_kernel(stored):
    """Few tiles of C and a long K, at multiples of the tiled kernel's tiles: its batched form
    takes the slices (above the crossover; below it the direct kernel still runs)."""
    stored[DIRECT.number] = [_found(DIRECT, 768, 13000.0)]
    stored[TILED.number] = [_found(TILED, 1024, 33000.0), _found(TILED, 4096, 45000.0)]
    cross = choice.crossover(GPU)
    config = choice.choose_kernel(GPU, (256, 256, 16384), cross=cross)
    assert config.rung == TILED.number
    assert choice.tiled_split(GPU, config, (256, 256, 16384)) == 64  # 4 tiles, 256 deep each
    assert choice.choose_kernel(GPU, (256, 256, 4096), cross=cross).rung == DIRECT.number


def test_long_k_finds_the_tiled_kernel_behind_another_packing_kernel(stored):
    """Where the packing kernels' choice is one that cannot split (a ladder rung, ranked first
    by its stored speed), the tiled kernel's own stored configuration takes the slices."""
    stored[DIRECT.number] = [_found(DIRECT, 768, 13000.0)]
    stored[TILED.number] = [_found(TILED, 4096, 45000.0)]
    stored[10] = [_found(get_rung(10), 256, 60000.0)]
    cross = choice.crossover(GPU)
    assert choice.choose_kernel(GPU, (256, 256, 16384), cross=cross).rung == TILED.number


def test_reading_b_in_one_launch_is_weighed_against_another_kernels_pack(stored, monkeypatch):
    """The kernel for any size reads a BT packed first. Where reading B pays, the tiled
    kernel's configuration that reads B where it lies runs in one launch, so it takes the
    shape unless the other kernel's speed repays the pack; where reading B does not pay, or
    no stored configuration of the tiled kernel reads B, the expected speeds decide alone."""
    shape = (2048, 2048, 64)  # 17.9 us at 30 TFLOP/s; a pack of B would take 3.5 more

    def at_shape(rung, gflops: float, **params: int) -> lookup.Found:
        found = dataclasses.replace(_found(rung, 2048, gflops), shape=shape)
        return dataclasses.replace(found, params={**found.params, **params})

    reading = at_shape(TILED, 30000.0, TSM=64, TSN=64)
    assert choice.reads_b_itself(reading.params)
    stored[DIRECT.number] = []
    stored[TILED.number] = [reading]
    cross = choice.no_crossover(GPU)
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: True)
    monkeypatch.setattr(choice, "b_pack_s", lambda device, s: 3.5e-6)
    # 16.3 us and its pack against 17.9; 11.9 us and its pack against 17.9
    for gflops, rung in ((33000.0, TILED.number), (45000.0, TILED_ANY.number)):
        stored[TILED_ANY.number] = [at_shape(TILED_ANY, gflops)]
        assert choice.choose_kernel(GPU, shape, cross=cross).rung == rung, gflops
    stored[TILED_ANY.number] = [at_shape(TILED_ANY, 33000.0)]
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: False)
    assert choice.choose_kernel(GPU, shape, cross=cross).rung == TILED_ANY.number
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: True)
    stored[TILED.number] = [at_shape(TILED, 30000.0, TSM=64, TSN=64, PIPELINE=2)]
    assert choice.choose_kernel(GPU, shape, cross=cross).rung == TILED_ANY.number


def test_the_direct_kernel_is_weighed_against_the_pack_the_kernel_for_any_size_runs_behind(
        stored, monkeypatch):
    """Above the crossover the direct kernel, which reads its operands in place, runs where its
    expected speed beats the packing kernels': where their choice is the kernel for any size,
    with the pack of B it always runs behind counted; a ladder rung's speed stands alone."""
    shape = (2048, 2048, 64)  # 17.9 us at 30 TFLOP/s; a pack of B would take 3.5 more

    def at_shape(rung, gflops: float) -> lookup.Found:
        return dataclasses.replace(_found(rung, 2048, gflops), shape=shape)

    stored[DIRECT.number] = [at_shape(DIRECT, 30000.0)]
    stored[TILED.number] = []
    cross = choice.no_crossover(GPU)
    monkeypatch.setattr(choice, "b_pack_s", lambda device, s: 3.5e-6)
    # 16.3 us and its pack against 17.9; 11.9 us and its pack against 17.9
    for gflops, rung in ((33000.0, DIRECT.number), (45000.0, TILED_ANY.number)):
        stored[TILED_ANY.number] = [at_shape(TILED_ANY, gflops)]
        assert choice.choose_kernel(GPU, shape, cross=cross).rung == rung, gflops
    stored[TILED_ANY.number] = []
    stored[10] = [at_shape(get_rung(10), 33000.0)]
    assert choice.choose_kernel(GPU, shape, cross=cross).rung == 10


def test_tiled_split_needs_whole_tiles_local_memory_and_a_long_k_or_idle_units():
    tiled = choice.Config(TILED.number, TILED.defaults(), "default")  # 128 x 128 x 16 tiles
    assert choice.tiled_split(GPU, tiled, (512, 512, 16384)) == 32  # 16 tiles x 32 <= 4 x 132
    assert choice.tiled_split(GPU, tiled, (4096, 4096, 4096)) == 1
    # off its tiles, the split of the product padded to them, which is what it runs
    assert choice.tiled_split(GPU, tiled, (500, 512, 16384)) == 32
    assert choice.tiled_split(GPU, tiled, (500, 500, 16380)) == 32
    # any count of slices that divides K's tiles: 1000 tiles of 16 in 50 slices of 320, where
    # powers of two stop at 8 (3 tiles of C, at most 62 slices of 256 or more)
    assert choice.tiled_split(GPU, tiled, (384, 128, 16000)) == 50
    assert choice.tiled_split(GPU, tiled, (512, 512, 12288)) == 32  # 768 tiles, 16 of C
    # along a short K only where the tiles of C leave more than half the units idle, up to two
    # groups each: 16 tiles in four slices of 256 (no deeper cut: a slice stays 256 deep)
    assert choice.tiled_split(GPU, tiled, (512, 512, 1024)) == 4
    assert choice.tiled_split(GPU, tiled, (1024, 1024, 1024)) == 4  # 64 tiles
    assert choice.tiled_split(GPU, tiled, (1536, 1024, 1024)) == 1  # 96 tiles of 132 units
    assert choice.tiled_split(GPU, tiled, (2048, 2048, 1024)) == 1  # 256 tiles: none idle
    assert choice.tiled_split(GPU, tiled, (512, 512, 256)) == 1  # too short
    thin = choice.Config(TILED.number, {**TILED.defaults(), "TSM": 32, "WPTM": 4}, "default")
    assert choice.tiled_split(GPU, thin, (64, 4096, 4096)) > 1
    # below 64 rows the pack of BT outweighs a split, unless the kernel reads B as it lies
    piped = choice.Config(TILED.number, {**thin.params, "PIPELINE": 2}, "default")
    assert choice.tiled_split(GPU, piped, (32, 4096, 4096)) == 1
    assert choice.read_b_pays(GPU, (32, 4096, 4096))
    assert choice.tiled_split(GPU, thin, (32, 4096, 4096)) > 1
    panels = choice.Config(TILED.number, {**TILED.defaults(), "PANELS": 1, "CACHE_A": 0,
                                          "CACHE_B": 0}, "default")
    assert choice.tiled_split(GPU, panels, (512, 512, 16384)) == 1
    direct = choice.Config(DIRECT.number, DIRECT.defaults(), "default")
    assert choice.tiled_split(GPU, direct, (512, 512, 16384)) == 1


def test_the_tiled_kernel_for_any_size_splits_k_in_whole_tiles_but_the_last():
    """The tiled kernel for any size splits K by the tiled kernel's rule, counting its partial
    tiles of C, with no size dividing K: each slice whole tiles deep, the last what is left."""
    any_size = get_rung(13)
    tiles = {"TSM": 128, "TSN": 128, "TSK": 16, "WPTM": 8, "WPTN": 8}
    big = choice.Config(13, any_size.resolve(tiles), "default")
    # 64 tiles of C leave more than half of 132 units idle: four slices, 256 deep, the last 232
    assert choice.tiled_split(GPU, big, (1000, 1000, 1000)) == 4
    assert any_size.slice_depth(big.params, 1000, 4) == 256
    assert choice.tiled_split(GPU, big, (1500, 1000, 1000)) == 1  # 96 tiles
    assert choice.tiled_split(GPU, big, (1000, 1000, 500)) == 2  # 256 deep, the last 244
    assert choice.tiled_split(GPU, big, (1000, 1000, 400)) == 1  # slices 208 deep: too short
    small = choice.Config(13, any_size.resolve({**tiles, "TSM": 64, "TSN": 64, "WPTM": 4,
                                                "WPTN": 4}), "default")
    assert choice.tiled_split(GPU, small, (1000, 1000, 1000)) == 1  # 256 tiles
    # a long K: 16 tiles in 32 slices of 512, the last 128 deep
    assert choice.tiled_split(GPU, small, (250, 250, 16000)) == 32
    assert any_size.slice_depth(small.params, 16000, 32) == 512
    assert choice.tiled_split(GPU, small, (40, 250, 16000)) == 1  # too few rows for its pack


def _found_at(rung, shape: tuple[int, int, int], gflops: float, **params) -> lookup.Found:
    return lookup.Found(rung.number, {**rung.defaults(), **params}, "tuned", "tuned", shape,
                        gflops, Path("made-up.json"))


def test_a_skinny_product_runs_on_the_skinny_kernel_where_it_is_stored_and_fastest(stored):
    stored[DIRECT.number] = [_found(DIRECT, 768, 13000.0)]
    stored[TILED.number] = [_found(TILED, 4096, 45000.0)]
    # nothing stored for the skinny kernel: it has no defaults, the others run
    assert choice.choose_kernel(GPU, (4096, 16, 4096)).rung != SKINNY.number
    stored[SKINNY.number] = [_found_at(SKINNY, (4096, 16, 4096), 20000.0, LR=16)]
    for shape in [(4096, 16, 4096), (4096, 8, 4096), (1024, 1, 1024)]:
        chosen = choice.choose_kernel(GPU, shape)
        assert (chosen.rung, chosen.params["LR"]) == (SKINNY.number, 16), shape
    # no wider than the widest short side it was measured at
    assert choice.choose_kernel(GPU, (4096, 17, 4096)).rung != SKINNY.number
    stored[SKINNY.number].append(_found_at(SKINNY, (4096, 64, 4096), 20000.0, LR=16))
    assert choice.choose_kernel(GPU, (4096, 64, 4096)).rung == SKINNY.number
    # the entry nearest in short side, not the fastest: 32 columns read twice as fast per flop
    stored[SKINNY.number].append(_found_at(SKINNY, (4096, 32, 4096), 40000.0, LR=64))
    assert choice.choose_kernel(GPU, (4096, 16, 4096)).params["LR"] == 16
    assert choice.choose_kernel(GPU, (4096, 24, 4096)).params["LR"] == 64
    stored[SKINNY.number].pop()
    # M short reads the long operand the other way: its own measurement is what counts there
    stored[SKINNY.number].append(_found_at(SKINNY, (16, 4096, 4096), 15000.0, LR=8))
    chosen = choice.choose_kernel(GPU, (32, 4096, 4096))
    assert (chosen.rung, chosen.params["LR"]) == (SKINNY.number, 8)
    # not skinny: a short side above SHORT_MAX, or a long operand too small to be the work
    assert choice.choose_kernel(GPU, (4096, 65, 4096)).rung != SKINNY.number
    assert choice.choose_kernel(GPU, (256, 16, 256)).rung != SKINNY.number
    # a rival expected faster at the shape keeps it
    stored[DIRECT.number] = [_found_at(DIRECT, (4096, 16, 4096), 90000.0)]
    assert choice.choose_kernel(GPU, (4096, 16, 4096)).rung == DIRECT.number
    # and a configuration that failed is not chosen again
    stored[DIRECT.number] = []
    rejected = lambda number, params: number == SKINNY.number  # noqa: E731
    assert choice.choose_kernel(GPU, (4096, 16, 4096), rejected).rung != SKINNY.number


def test_the_skinny_kernels_grid_follows_the_short_side():
    params = SKINNY.resolve({"LR": 16, "LK": 4, "VR": 2, "SB": 8})
    # N short: 4096 / 32 groups along the long side, 16 / 8 along the short one
    assert SKINNY.geometry(params, 4096, 16) == ((128 * 16, 2 * 4), (16, 4))
    assert SKINNY.geometry(params, 16, 4096) == ((128 * 16, 2 * 4), (16, 4))
    assert SKINNY.geometry(params, 33, 5) == ((2 * 16, 1 * 4), (16, 4))


def test_the_skinny_kernel_splits_k_as_its_configuration_says():
    config = choice.Config(SKINNY.number, SKINNY.resolve({"LR": 16, "LK": 16, "VR": 4}), "tuned")
    assert choice.split_for(GPU, config, (4096, 16, 4096)) == 1
    split = choice.Config(SKINNY.number, {**config.params, "SPLIT": 4}, "tuned")
    assert choice.split_for(GPU, split, (4096, 16, 4096)) == 4
    assert choice.split_for(GPU, split, (4096, 16, 4098)) == 1  # 4 does not divide K
    direct = choice.Config(DIRECT.number, DIRECT.defaults(), "tuned")
    assert choice.split_for(GPU, direct, (4096, 16, 4096)) == choice.split_of(
        GPU, direct.params, (4096, 16, 4096))


def test_reading_b_pays_where_c_has_few_rows_against_the_devices_flops_per_byte():
    """The pack of B is all of B read and written once; reading B in place costs a share of
    the product. So it pays below a number of rows of C that the device's ratio of peak FLOP/s
    to bandwidth sets, whatever N and K are, and a device with more bandwidth per FLOP packs
    from fewer rows on."""
    hw = choice.hardware_for_device(GPU)
    rows = 4 * hw.peak_gflops / (splits.READ_B_COST * hw.mem_gbps)
    below, above = int(rows * 0.9), int(rows * 1.1) + 1
    for n, k in [(4096, 4096), (1024, 16384), (8192, 2048)]:
        assert choice.read_b_pays(GPU, (below, n, k))
        assert not choice.read_b_pays(GPU, (above, n, k))
    wide = dataclasses.replace(GPU, name="NVIDIA H200")
    big = dataclasses.replace(GPU, name="NVIDIA H100 80GB HBM3")
    crossing = [next(m for m in range(1, 10**4) if not choice.read_b_pays(d, (m, 4096, 4096)))
                for d in (big, wide)]
    assert crossing[1] < crossing[0]


def test_a_gpu_counts_the_packs_launch_so_a_small_product_reads_b(monkeypatch):
    """On a GPU the pack is a launch of its own: on the H100 at 2048 x 2048 x 64 its pass over
    B is shorter than reading B in place costs, but not with the launch, so gemm() reads B
    there. A CPU counts the pass alone."""
    h100 = dataclasses.replace(GPU, name="NVIDIA H100 80GB HBM3")
    shape = (2048, 2048, 64)
    assert choice.read_b_pays(h100, shape)
    # along a K long enough to split, pipelines repay the launch: the pass alone counts
    assert not choice.read_b_pays(h100, (4096, 32, 4096))
    monkeypatch.setattr(splits, "PACK_LAUNCH_S", {})
    assert not choice.read_b_pays(h100, shape)
    monkeypatch.setattr(splits, "PACK_LAUNCH_S", {("GPU", h100.backend): 1.0})
    assert not choice.read_b_pays(dataclasses.replace(h100, type="CPU"), shape)


def test_each_backend_counts_its_own_launch_and_an_unnamed_one_the_least():
    """A second launch costs a call more through NVIDIA's OpenCL than on CUDA: with that
    figure, products up to a larger size read B as they lie through OpenCL. The bound, which
    names no backend, takes the least figure for the device type; a CPU counts none."""
    h100 = dataclasses.replace(GPU, name="NVIDIA H100 80GB HBM3")
    cuda = dataclasses.replace(h100, backend="cuda")
    hw = hardware_for_device(h100)
    assert splits.launch_s_on(hw, "opencl") > splits.launch_s_on(hw, "cuda") > 0
    assert splits.launch_s_on(hw) == splits.launch_s_on(hw, "cuda")
    assert splits.launch_s_on(hardware_for_device(dataclasses.replace(h100, type="CPU")),
                              "opencl") == 0.0
    between = next(s for s in range(512, 4096, 32)
                   if splits.read_b_pays(h100, (s, s, s)) != splits.read_b_pays(cuda, (s, s, s)))
    assert splits.read_b_pays(h100, (between,) * 3) and not splits.read_b_pays(cuda, (between,) * 3)


def test_padding_pays_on_a_gpu_where_the_float_reads_cost_more_than_the_extra_packs():
    """Off the vector width the kernel for any size reads an operand float by float; packed
    whole vectors apart it reads vectors. An operand packed anyway costs nothing more; one read
    in place costs a pack, a launch of its own, which a small product does not repay. A CPU
    reads its operands as they come."""
    h100 = dataclasses.replace(GPU, name="NVIDIA H100 80GB HBM3")
    assert splits.padding_pays(h100, (999, 999, 999), [999])
    assert splits.padding_pays(h100, (99, 99, 99), [])
    assert not splits.padding_pays(h100, (255, 255, 255), [255])
    assert not splits.padding_pays(h100, (999, 7, 999), [999])  # a pass over A for 7 columns
    assert not splits.padding_pays(dataclasses.replace(h100, type="CPU"), (999, 999, 999), [])


def test_on_the_vector_width_a_plan_reads_its_operands_as_padded_with_no_pack_more():
    """On the vector width of the kernel for any size its operands lie whole vectors apart
    already: the plan builds the kernel so (PADDED_LD, whose float-by-float path then drops
    out), packs nothing more and does not ask whether padding pays."""
    config = Config(TILED_ANY.number, TILED_ANY.resolve({"WIDTH": 4}))
    m, n, k = 1000, 1004, 999
    plan = new_plan(m, n, k, np.float32(1), np.float32(0), Mat(None, 0, m, False),
                    Mat(None, 0, n, True), Mat(None, 0, m, False), config,
                    pads=lambda extra: pytest.fail("asked"))
    assert plan.padded_ld and not plan.pack_a and not plan.pack_b
    assert (plan.rows_a, plan.rows_bt) == (m, n)


@pytest.mark.parametrize("in_place,pays", [("a", True), ("a", False), ("bt", True)])
def test_a_plan_off_the_vector_width_packs_its_operands_whole_vectors_apart(in_place, pays):
    """The plan of the kernel for any size at 999 x 1001 x 999, one of A and BT as the kernel
    reads it in place and the other packed anyway: where padding pays, both are packed with
    their columns rounded up to the vector width (the scratch they fill counted so), the rows
    staying what the kernel bounds; where it does not, they are packed or read as before.
    `pads` is asked with the rows of the operand that would be packed for it alone."""
    m, n, k = 999, 1001, 999
    config = Config(TILED_ANY.number, TILED_ANY.resolve({"WIDTH": 4}))
    asked = []

    def pads(extra):
        asked.append(list(extra))
        return pays
    # A (M x K) read where it lies and B to transpose, or A stored transposed and BT given
    a, b = ((Mat(None, 0, m, False), Mat(None, 0, k, False)) if in_place == "a" else
            (Mat(None, 0, k, True), Mat(None, 0, n, True)))
    plan = new_plan(m, n, k, np.float32(1), np.float32(0), a, b, Mat(None, 0, m, False),
                    config, pads=pads)
    assert asked == [[m] if in_place == "a" else [n]]
    assert (plan.mp, plan.np_, plan.kp) == (m, n, k)
    assert plan.padded_ld == pays
    assert (plan.pack_a, plan.pack_b) == ((pays, True) if in_place == "a" else (True, pays))
    if pays:
        assert (plan.rows_a, plan.rows_bt) == (1000, 1004)
        assert ("packed A", 1000 * k) in plan.temps and ("packed B", k * 1004) in plan.temps
    else:
        assert (plan.rows_a, plan.rows_bt) == (m, n)


def test_a_short_k_where_reading_b_pays_runs_what_reads_it_on_a_gpu(stored, monkeypatch):
    """A pipeline ranked first by its kernel's speed runs behind a pack of B at every call:
    where reading B pays along a short K and a configuration that reads B was tuned at the
    shape, gemm() runs the best one that reads B instead; without that tune, where reading
    does not pay, or on a CPU, the ranking stands."""
    # 64 x 64 tiles: enough work-groups at these shapes that K stays whole
    tiles = {**TILED.defaults(), "TSM": 64, "TSN": 64}
    piped = dataclasses.replace(_found(TILED, 1024, 45000.0), params={**tiles, "PIPELINE": 2})
    plain = dataclasses.replace(_found(TILED, 1024, 33000.0), params=tiles)
    stored[TILED.number] = [piped, plain]
    stored[DIRECT.number] = []
    cross = choice.no_crossover(GPU)
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: True)
    assert choice.choose_kernel(GPU, (1024, 1024, 1024), cross=cross).params["PIPELINE"] == 0
    cpu = dataclasses.replace(GPU, type="CPU")
    assert choice.choose_kernel(cpu, (1024, 1024, 1024), cross=cross).params["PIPELINE"] == 2
    # tuned at no such shape, the pipeline with its pack still beats the reader
    assert choice.choose_kernel(GPU, (2048, 2048, 512), cross=cross).params["PIPELINE"] == 2
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: False)
    assert choice.choose_kernel(GPU, (1024, 1024, 1024), cross=cross).params["PIPELINE"] == 2


def test_a_pipeline_is_weighed_with_its_pack_against_what_reads_b(stored, monkeypatch):
    """Where reading B pays but no tune measured the tiled kernel at the shape, a pipeline
    ranked first by its kernel's speed is expected with the pack of B it runs behind counted:
    a configuration that reads B, expected slower by its kernel alone but faster than the
    pipeline and its pack, runs instead; one that the pipeline beats even with its pack does
    not."""
    tiles = {"TSM": 64, "TSN": 64}
    piped = _found_at(TILED, (2048, 2048, 128), 40000.0, PIPELINE=2, **tiles)
    reading = _found_at(TILED, (2048, 2048, 64), 25000.0, **tiles)
    assert choice.reads_b_itself(reading.params) and not choice.reads_b_itself(piped.params)
    stored[TILED.number] = [piped, reading]
    stored[DIRECT.number] = []
    cross = choice.no_crossover(GPU)
    shape = (2048, 2048, 32)  # 26,400 GFLOP/s expected of the pipeline, 20,300 of the reader
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: True)
    monkeypatch.setattr(choice, "b_pack_s", lambda device, s: 3.5e-6)
    assert choice.choose_kernel(GPU, shape, cross=cross).params["PIPELINE"] == 0
    monkeypatch.setattr(choice, "b_pack_s", lambda device, s: 1e-6)  # repaid by its speed
    assert choice.choose_kernel(GPU, shape, cross=cross).params["PIPELINE"] == 2
    monkeypatch.setattr(choice, "b_pack_s", lambda device, s: 3.5e-6)
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: False)
    assert choice.choose_kernel(GPU, shape, cross=cross).params["PIPELINE"] == 2


def test_long_k_prefers_a_configuration_that_reads_b_where_reading_it_pays(stored, monkeypatch):
    """A cp.async pipeline cannot read B as it lies, so it packs the long operand at every
    call: where reading B pays, the best stored configuration that can read it takes the
    slices instead, though ranked below; where it does not, the ranking stands."""
    piped = dataclasses.replace(_found(TILED, 4096, 45000.0),
                                params={**TILED.defaults(), "PIPELINE": 2})
    plain = _found(TILED, 1024, 33000.0)
    stored[DIRECT.number] = [_found(DIRECT, 768, 13000.0)]
    stored[TILED.number] = [piped, plain]
    cross = choice.crossover(GPU)
    shape = (256, 256, 16384)
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: True)
    config = choice.choose_kernel(GPU, shape, cross=cross)
    assert config.rung == TILED.number and config.params["PIPELINE"] == 0
    monkeypatch.setattr(choice, "read_b_pays", lambda device, s: False)
    assert choice.choose_kernel(GPU, shape, cross=cross).params["PIPELINE"] == 2


def test_panels_take_a_shape_their_tiles_do_not_divide_padded(stored, monkeypatch):
    """The tiled kernel's panel configurations pack from the caller's layout, padding
    included: at 1000 cubed the stored one at 1024 cubed is counted on the useful share of its
    padded product and wins over a slower kernel for any size; a configuration without panels
    pays copies to pad, so with the same measured speed it is counted slower; a shape its tiles
    divide is the lookup's as before."""
    panels = dataclasses.replace(_found(TILED, 1024, 300.0), params={
        **TILED.defaults(), "TSM": 16, "TSN": 16, "WPTM": 16, "WPTN": 16, "VWM": 16,
        "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1})
    copying = dataclasses.replace(panels, params={**panels.params, "PANELS": 0})
    any_size = _found(get_rung(13), 1024, 50.0)
    cpu = dataclasses.replace(GPU, type="CPU", compute_units=2)

    _only_what_fits(stored, monkeypatch)
    stored[13] = [any_size]
    stored[TILED.number] = [panels]
    cross = choice.no_crossover(cpu)
    config = choice.choose_kernel(cpu, (1000, 1000, 1000), cross=cross)
    assert config.rung == TILED.number and config.params["PANELS"] == 1
    assert choice.choose_kernel(cpu, (1024, 1024, 1024), cross=cross).rung == TILED.number
    stored[TILED.number] = [copying, panels]
    config = choice.choose_kernel(cpu, (1000, 1000, 1000), cross=cross)
    assert config.rung == TILED.number and config.params["PANELS"] == 1
    stored[TILED.number] = [panels]
    with_panels = choice._padded_tiled(cpu, (1000, 1000, 1000), choice.never)
    stored[TILED.number] = [copying]
    with_copies = choice._padded_tiled(cpu, (1000, 1000, 1000), choice.never)
    assert with_panels is not None and with_copies is not None
    copies_s = choice.padding_passes_s(cpu, (1000,) * 3, (1008,) * 3)  # tiles of 16
    assert copies_s > 0
    assert 2e9 / with_copies[1] == pytest.approx(2e9 / with_panels[1] + copies_s * 1e9)
    stored[TILED.number] = [dataclasses.replace(panels, gflops=40.0)]  # slower even padded
    assert choice.choose_kernel(cpu, (1000, 1000, 1000), cross=cross).rung == 13


def test_a_gpu_counts_the_launches_padding_adds(monkeypatch):
    """Padding on a GPU adds a pass over A and an epilogue, each a launch that the kernels
    reading the shape unpadded do without (B is packed for them too): a small product's passes
    are mostly their launches. An A read where it lies (`as_run`) takes neither; a CPU counts
    the bytes alone."""
    h100 = dataclasses.replace(GPU, name="NVIDIA H100 80GB HBM3")
    shape, padded = (300, 100, 256), (384, 128, 256)  # M and N padded, K whole
    launch = splits.launch_s_on(hardware_for_device(h100), h100.backend)
    with_launches = choice.padding_passes_s(h100, shape, padded)
    monkeypatch.setattr(splits, "PACK_LAUNCH_S", {})
    bytes_only = choice.padding_passes_s(h100, shape, padded)
    assert with_launches == pytest.approx(bytes_only + 2 * launch)
    monkeypatch.undo()
    tall, tall_padded = (4096, 100, 512), (4096, 128, 512)  # only B's side padded
    as_run = choice.padding_passes_s(h100, tall, tall_padded, as_run=True)
    monkeypatch.setattr(splits, "PACK_LAUNCH_S", {})
    assert as_run == pytest.approx(
        choice.padding_passes_s(h100, tall, tall_padded, as_run=True) + launch)
    cpu = dataclasses.replace(h100, type="CPU")
    cpu_bytes = choice.padding_passes_s(cpu, shape, padded)
    monkeypatch.setattr(splits, "PACK_LAUNCH_S", {("GPU", h100.backend): 1.0})
    assert choice.padding_passes_s(cpu, shape, padded) == cpu_bytes


def test_a_large_product_off_the_tiles_runs_the_tiled_kernel_padded_where_that_pays(
        stored, monkeypatch):
    """One row off the tiles, a large product runs the tiled kernel on the padded product,
    its copies counted at the device's memory bandwidth, where that beats the tiled kernel for
    any size measured there; where the padded kernel is not fast enough to repay them, the
    kernel for any size stays."""
    tiled = dataclasses.replace(_found(TILED, 4096, 48000.0), params={
        **TILED.defaults(), "TSM": 64, "TSN": 128, "TSK": 32})
    any_size = dataclasses.replace(_found(get_rung(13), 4097, 36500.0))
    h100 = dataclasses.replace(GPU, name="NVIDIA H100 80GB HBM3")

    _only_what_fits(stored, monkeypatch)
    stored[13] = [any_size]
    stored[TILED.number] = [tiled]
    cross = choice.no_crossover(h100)
    shape = (4097, 4097, 4097)
    config = choice.choose_kernel(h100, shape, cross=cross)
    assert config.rung == TILED.number and config.params["TSN"] == 128
    found = choice._padded_tiled(h100, shape, choice.never)
    assert found is not None and 40000 < found[1] < 48000
    stored[TILED.number] = [dataclasses.replace(tiled, gflops=38000.0)]
    assert choice.choose_kernel(h100, shape, cross=cross).rung == 13
    assert choice.choose_kernel(h100, (4096,) * 3, cross=cross).rung == TILED.number


def test_a_launch_of_several_waves_counts_its_last_groups_a_unit_at_a_time():
    """Under one wave the empty slots idle throughout, and after one wave the groups left over
    take a whole wave; after SPREAD_AFTER_WAVES waves of two groups per unit, they take half a
    wave while each has a unit to itself, a whole one once some unit has two. One group per
    unit counts waves whole."""
    units = 132
    assert lookup.SPREAD_AFTER_WAVES == 2
    assert lookup.wave_fill(66, units, 2) == pytest.approx(66 / 264)
    assert lookup.wave_fill(264, units, 2) == 1.0
    assert lookup.wave_fill(320, units, 2) == pytest.approx(320 / 528)
    assert lookup.wave_fill(560, units, 2) == pytest.approx(560 / (2.5 * 264))
    # 4097 cubed padded to 128 x 128 tiles: four waves and 33 groups, 4.5 waves of time
    assert lookup.wave_fill(33 * 33, units, 2) == pytest.approx(1089 / (4.5 * 264))
    assert lookup.wave_fill(4 * 264 + 133, units, 2) == pytest.approx((4 * 264 + 133) / (5 * 264))
    assert lookup.wave_fill(4 * 132 + 5, units, 1) == pytest.approx(533 / (5 * 132))
    # more groups never fill the device worse than whole waves of them
    for groups in range(265, 2000, 7):
        assert lookup.wave_fill(groups, units, 2) >= groups / (-(-groups // 264) * 264)


def test_expected_speeds_count_the_slices_of_k_the_tiled_kernel_runs_in(stored):
    """A 64 x 64 tile gives 4096 x 64 x 4096 64 work-groups, half of 132 compute units; gemm()
    splits K eight ways there, which fills them: the tiled kernel's expected speed counts that
    (a configuration measured so, at the very shape, is expected at its measured speed), unless
    asked for K whole. The direct kernel's does not."""
    params = TILED.resolve({"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4})
    found = dataclasses.replace(_found(TILED, 4096, 30000.0), shape=(4096, 64, 4096),
                                params=params)
    shape = (4096, 64, 4096)
    assert choice.tiled_split(GPU, choice.from_found(found), shape) == 8
    assert lookup.expected_gflops(GPU, TILED, found, shape) == pytest.approx(30000.0)
    # K whole: 64 groups, a quarter of one wave of two groups per unit, where the
    # measurement's 512 filled 1.94 of 2 such waves
    assert lookup.expected_gflops(GPU, TILED, found, shape, split=False) == pytest.approx(
        30000.0 * (64 / 264) / (512 / 528))
    direct = dataclasses.replace(_found(DIRECT, 4096, 30000.0), shape=shape,
                                 params=DIRECT.resolve({"TSM": 64, "TSN": 64}))
    assert lookup.expected_gflops(GPU, DIRECT, direct, shape) == pytest.approx(30000.0)
    # measured with twice the rows of C, the direct kernel is expected at half of that speed
    # here (and further discounted by the distance): no slices of K fill the other half
    wider = dataclasses.replace(direct, shape=(4096, 128, 4096))
    assert lookup.expected_gflops(GPU, DIRECT, wider, shape) < 0.5 * 30000.0


def test_a_padded_product_is_split_and_expected_so(stored, monkeypatch):
    """gemm() splits K on a product padded to the tiles as on any multiple of them, so the
    padded product's speed is expected with its slices (`tiled_split` at the padded shape):
    counted with K whole, few work-groups looked a full wave and ran so, 4096x48x4096 at a
    quarter of cuBLAS (results/h100/padded-split). Its useful share still counts: at 16
    columns a 32-column tile measured at 32 does twice the work, and the skinny kernel
    measured faster at 16 than half the tile's speed stays ahead there; at 24 columns the
    padded tiles are ahead. The passes padding adds (B's padded copy, the product into C, a
    launch) take a share off; A, whose sizes are not padded, is read where it lies. That holds
    at skinny shapes whose long side is not padded alone: at a mid-sized one with a long K, and
    where the long side is padded too, tiles it would split are left out, as measured
    (results/h100/padded-split-k). On CUDA, where the launch padding adds was measured
    cheapest."""
    gpu = dataclasses.replace(GPU, backend="cuda")
    tiled = dataclasses.replace(_found(TILED, 4096, 29000.0), shape=(4096, 32, 4096), params={
        **TILED.defaults(), "TSM": 64, "TSN": 32, "TSK": 32, "WPTM": 4, "WPTN": 8, "VWM": 2,
        "VWN": 4})
    skinny = dataclasses.replace(_found(SKINNY, 4096, 16000.0), shape=(4096, 16, 4096),
                                 params=SKINNY.defaults())

    _only_what_fits(stored, monkeypatch)
    stored[TILED.number] = [tiled]
    stored[SKINNY.number] = [skinny]
    to = (4096, 32, 4096)
    split = lookup.expected_gflops(gpu, TILED, tiled, to)
    assert lookup.expected_gflops(gpu, TILED, tiled, to, split=False) < split
    for shape in ((4096, 16, 4096), (4096, 24, 4096)):
        padded = choice._padded_tiled(gpu, shape, choice.never)
        assert padded is not None and padded[0] is tiled
        assert 0.75 * split * shape[1] / 32 < padded[1] < split * shape[1] / 32
        config = choice.from_found(tiled)
        assert choice.tiled_split(gpu, config, shape) == choice.tiled_split(gpu, config, to) > 1
    for other in ((500, 500, 16384), (4000, 16, 4096)):  # mid-sized; the long side padded
        assert choice.tiled_split(gpu, choice.from_found(tiled), other) > 1
        assert choice._padded_tiled(gpu, other, choice.never) is None
    cross = choice.no_crossover(gpu)  # above it, whatever the made-up device's default
    assert choice.choose_kernel(gpu, (4096, 16, 4096), cross=cross).rung == SKINNY.number
    assert choice.choose_kernel(gpu, (4096, 24, 4096), cross=cross).rung == TILED.number


def test_below_the_crossover_a_cpu_leaves_no_cores_to_a_few_direct_groups(stored):
    """A CPU's stored direct configuration that gives a small product fewer work-groups than
    the CPU has cores (measured on a CPU with fewer) yields to a packing kernel expected
    faster, below the crossover too; where its groups fill the cores, or on a GPU, the
    crossover stands."""
    big_tiles = DIRECT.resolve({"TSM": 64, "TSN": 128, "WPTM": 64, "WPTN": 8})
    direct = dataclasses.replace(_found(DIRECT, 256, 20.0), params=big_tiles)
    stored[DIRECT.number] = [direct]
    stored[TILED.number] = [_found(TILED, 512, 140.0)]
    many = dataclasses.replace(GPU, type="CPU", compute_units=16)
    few = dataclasses.replace(many, compute_units=2)
    shape = (256, 256, 256)
    assert lookup.group_count(many, DIRECT, big_tiles, shape) == 8
    for device, rung in ((many, TILED.number), (few, DIRECT.number)):
        cross = choice.crossover(device)
        assert math.prod(shape) < cross.min_indirect
        assert choice.choose_kernel(device, shape, cross=cross).rung == rung, device
    gpu = dataclasses.replace(GPU, compute_units=16)
    assert choice.choose_kernel(gpu, shape, cross=choice.crossover(gpu)).rung == DIRECT.number


def test_padding_leaves_out_an_entry_this_device_s_own_tune_beat_at_its_slot(stored, monkeypatch):
    """Another device's configuration at a slot this device tuned is outranked there, and the
    padded route must not bring it back at a shape no stored tile divides: 4097 cubed ran 5%
    slower on it than on the device's own entries."""
    def at_4096(level, tsm, gflops):
        params = TILED.resolve({"TSM": tsm, "TSN": tsm, "TSK": 16, "WPTM": 8, "WPTN": 8})
        return lookup.Found(TILED.number, params, level, level, (4096,) * 3, gflops,
                            Path("made-up.json"))

    own, theirs = at_4096("tuned", 128, 40000.0), at_4096("family", 64, 50000.0)
    stored[TILED.number] = [own, theirs]
    padded = choice._padded_tiled(GPU, (4097,) * 3, choice.never)
    assert padded is not None and padded[0] == own
    stored[TILED.number] = [dataclasses.replace(theirs, shape=(4096, 4096, 2048)), own]
    assert choice._padded_tiled(GPU, (4097,) * 3, choice.never)[0].params == theirs.params
