"""The performance bound: its arithmetic on a made-up device, checked by hand; the limiting term
as parameters and figures change; the device table and overrides; the commands that show it;
and the committed measurements, none of which may beat the bound."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from clgemm.cli import main
from clgemm.cli.ladder_tables import ladder_table
from clgemm.core.errors import UsageError
from clgemm.core.paths import RESULTS, TUNING
from clgemm.core.problem import Problem
from clgemm.course.committed import device_records, measurements
from clgemm.devices.hardware import (Hardware, Overrides, apply_overrides, hardware_for,
                                     hardware_from_record)
from clgemm.devices.limits import DeviceLimits
from clgemm.measure.bench import BenchRun, add_bound
from clgemm.measure.ladder import LadderRun
from clgemm.measure.rung_runner import RunResult
from clgemm.model import bound as model_bound
from clgemm.model.inner_loops import step_for
from clgemm.rungs import get_rung

#: a made-up GPU with round figures: peak 2 x 64 x 10 x 1 GHz = 1280 GFLOP/s, 2 FMA
#: instructions per clock per CU, local memory 128 GB/s per CU (1280 GB/s in all)
TOY = Hardware(name="Toy GPU", kind="test figures", device_type="GPU", compute_units=10,
               clock_mhz=1000, lanes_per_cu=64, simd_width=32, issue_per_clock=2,
               loads_per_clock=2, widest_load_floats=4, subgroup_issue_per_clock=1,
               local_bytes_per_clock=128,
               local_mem_per_cu=65536, registers_per_cu=65536, max_registers_per_item=255,
               max_items_per_cu=2048, max_groups_per_cu=16, max_subgroups_per_cu=64,
               fma_latency=4, mem_gbps=1000, lockstep=True)

#: rung 6 with a 4 x 4 register block in 64 x 64 tiles: 16 x 16 work-items per group
BLOCK = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 4, "PAD": 1}


def toy(**changes) -> Hardware:
    return dataclasses.replace(TOY, **changes)


def bound(rung: int, params: dict, size, hw: Hardware = TOY) -> model_bound.Bound:
    m, n, k = (size, size, size) if isinstance(size, int) else size
    return model_bound.bound(get_rung(rung), params, Problem(m, n, k), hw)


# -- arithmetic on hand-computed cases -----------------------------------------------------------
def test_peak_is_lanes_units_clock_and_two():
    assert TOY.peak_gflops == pytest.approx(1280.0)
    assert TOY.fma_per_clock == 2


def test_pipeline_copies_in_one_instruction_each():
    tiled = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "WIDTH": 4}
    staged = bound(12, tiled, 640).term(model_bound.TILE)
    piped = bound(12, {**tiled, "PIPELINE": 3}, 640).term(model_bound.TILE)
    # A step: 32 FMAs and 8 + 4 local loads. 128 work-items share 2 vectors of A and 2 of B a
    # tile: loads and as many stores, or a cp.async each and a commit and a wait.
    assert "4 global loads" in staged.detail and "4 cp.asyncs" in piped.detail
    assert staged.share == pytest.approx(16 * 44 / (16 * 44 + 8 + 4))
    assert piped.share == pytest.approx(16 * 44 / (16 * 44 + 4 + 4 + 2))


def test_a_group_in_slices_of_k_walks_a_shorter_loop_then_sums():
    tiled = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "WIDTH": 4}
    whole = bound(12, tiled, 640).term(model_bound.TILE)
    sliced = bound(12, {**tiled, "KSPLIT": 2}, 640).term(model_bound.TILE)
    # Each slice's work-items load their own tiles of 16 steps, as the whole group's do, and
    # walk 320 steps; then the 8 x 4 sums: slice 1 stores them, slice 0 loads and adds them,
    # and each passes one barrier: (32 + 64 + 2) / 2 slots per work-item.
    per_tile = 16 * 44 + 8 + 4
    assert whole.share == pytest.approx(16 * 44 / per_tile)
    assert sliced.share == pytest.approx(
        16 * 44 / per_tile * (20 * per_tile) / (20 * per_tile + 49))
    assert "2 slices of the group, 320 steps each" in sliced.detail
    # the shorter the loop, the more the sums weigh
    short = bound(12, {**tiled, "KSPLIT": 2}, (640, 640, 64)).term(model_bound.TILE)
    assert short.share < sliced.share


def test_register_blocked_step_by_hand():
    b = bound(6, BLOCK, 640)
    # 16 FMAs and 4 + 4 loads share 2 issue slots per clock: 12 clocks, of which the FMAs
    # alone would need 8.
    assert b.term(model_bound.MIX).share == pytest.approx(8 / 12)
    # A sub-group of 32 spans 16 rows (local id 0) and 2 columns: each A load reads 16
    # different floats, each B load 2; 4 of each: 4*16*4 + 4*2*4 = 288 B for 16 FMAs x 32 lanes.
    assert b.term(model_bound.LOCAL).gflops == pytest.approx(2 * 1280 / (288 / 512))
    # 100 work-groups on 10 units: no tail. Local memory (8,448 B a group) lets 7 in.
    assert b.term(model_bound.DISTRIBUTION).share == 1.0
    assert b.occupancy.groups_per_cu == 7 and b.occupancy.limited_by == "local memory"
    assert b.occupancy.registers == 16 + 4 + 4 + 8
    assert b.term(model_bound.LATENCY).share == 1.0
    # A, B and C once: 12 * 640^2 bytes for 2 * 640^3 FLOPs, at 1000 GB/s.
    assert b.term(model_bound.GLOBAL).gflops == pytest.approx(2 * 640**3 / (12 * 640**2) * 1000)
    # Per tile of 16 steps (16 x 24 slots), 4 + 4 global loads, as many local stores, and 4 for
    # the barrier and the loop.
    assert b.term(model_bound.TILE).share == pytest.approx(384 / 404)
    assert b.gflops == pytest.approx(1280 * 8 / 12 * 384 / 404)
    assert b.limit == model_bound.MIX


def test_naive_and_tiled_steps_count_the_kernels():
    naive = step_for(get_rung(1), {"TS": 16})
    assert (naive.fmas, naive.loads, naive.chains) == (1, 2, 1)
    assert {r.space for r in naive.reads} == {"global"}
    more = step_for(get_rung(3), {"TS": 32, "WPT": 8})
    assert (more.fmas, more.loads, more.chains) == (8, 9, 8)
    wide = step_for(get_rung(4), {"TS": 32, "WIDTH": 4})
    assert (wide.fmas, wide.loads, wide.extra_arith) == (16, 5, 4)
    assert step_for(get_rung(4), {"TS": 32, "WIDTH": 1}).extra_arith == 0


def test_work_distribution_counts_the_busiest_unit_and_padding():
    # One 64 x 64 work-group for ten compute units.
    b = bound(6, BLOCK, (64, 64, 640))
    assert b.term(model_bound.DISTRIBUTION).share == pytest.approx(0.1)
    assert b.gflops == pytest.approx(1280 * 8 / 12 * 384 / 404 * 0.1)
    assert b.limit == model_bound.DISTRIBUTION
    # Rung 10 runs whole tiles: 65 x 65 x 17 in 128 x 128 x 32 of padded tiles, 4 groups.
    params = {**get_rung(10).defaults(), "TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4,
              "WPTN": 4}
    b10 = bound(10, params, (65, 65, 17))
    assert b10.term(model_bound.DISTRIBUTION).share == pytest.approx(
        0.4 * 65 * 65 * 17 / (128 * 128 * 32))


def test_helpers_add_their_dram_time():
    b = bound(6, BLOCK, 640)
    assert b.helper_bytes == 8 * 640 * 640  # read B, write B^T
    kernel_s = b.flops / (b.gflops * 1e9)
    assert b.gflops_with_helpers() == pytest.approx(
        b.flops / (kernel_s + b.helper_bytes / 1000e9) / 1e9)
    assert bound(2, {"TS": 16}, 640).helper_bytes == 0
    assert b.percent(b.gflops / 2) == pytest.approx(50.0)


# -- the limiting term switches --------------------------------------------------------------------
def test_local_memory_limits_when_its_bandwidth_is_low():
    one = {**BLOCK, "TSM": 16, "TSN": 16, "WPTM": 1, "WPTN": 1}
    assert bound(6, one, 640).limit == model_bound.MIX
    slow = apply_overrides(TOY, Overrides(local_gbps=16))
    b = bound(6, one, 640, slow)
    # 1 FMA per 16 B of A (16 rows) + 4 B of B... per 32 lanes: 72 B / 32 = 2.25 B per FMA.
    assert b.term(model_bound.LOCAL).gflops == pytest.approx(2 * 160 / 2.25)
    assert b.limit == model_bound.LOCAL


def test_global_memory_limits_when_dram_is_slow():
    b = bound(6, BLOCK, 640, toy(mem_gbps=1))
    assert b.limit == model_bound.GLOBAL
    assert b.gflops == pytest.approx(2 * 640**3 / (12 * 640**2))


def test_latency_limits_with_few_resident_subgroups_and_one_chain():
    # Rung 2 with 8 x 8 work-items: 2 sub-groups a group; room for only 2 sub-groups, each with
    # one chain of dependent FMAs: 2 x 1/4 per clock against 2 per clock.
    b = bound(2, {"TS": 8}, 640, toy(max_subgroups_per_cu=2))
    assert b.term(model_bound.LATENCY).share == pytest.approx(0.25)
    assert b.limit == model_bound.LATENCY
    assert bound(2, {"TS": 8}, 640).limit == model_bound.MIX


def test_small_work_groups_idle_gpu_lanes_but_not_cpu_ones():
    small = {**BLOCK, "TSM": 16, "TSN": 16}  # 4 x 4 work-items: half a sub-group
    b = bound(6, small, 640)
    assert b.term(model_bound.LANES).share == pytest.approx(0.5)
    assert b.limit == model_bound.LANES
    # 16 work-items share out 16 + 16 loads of a tile each: 2 x 32 + 4 slots per 384.
    assert b.gflops == pytest.approx(1280 * 0.5 * 8 / 12 * 384 / 452)
    cpu = bound(6, small, 640, toy(lockstep=False, device_type="CPU"))
    assert cpu.term(model_bound.LANES).share == 1.0


def test_bigger_register_blocks_raise_the_instruction_mix():
    shares = [bound(6, {**BLOCK, "WPTM": w, "WPTN": w}, 640).term(model_bound.MIX).share
              for w in (1, 2, 4, 8)]
    assert shares == sorted(shares) and shares[0] < 0.5 < shares[-1]


def test_register_estimate_past_the_limit_is_noted():
    huge = {"TSM": 128, "TSN": 128, "TSK": 16, "WPTM": 16, "WPTN": 16, "PAD": 1}
    b = bound(6, huge, 1280)
    assert b.occupancy.registers > 255
    assert any("spills" in note for note in b.notes)


# -- parameters only the tiled kernels (12, 13) have: the ladder reads them at their defaults ---
def test_missing_vector_and_cache_parameters_mean_their_defaults():
    params = get_rung(12).defaults()
    plain = bound(12, params, 1024)
    explicit = bound(12, {**params, "VWM": 1, "VWN": 1, "CACHE_A": 1, "CACHE_B": 1}, 1024)
    assert plain.gflops == explicit.gflops and plain.terms == explicit.terms


def test_vector_reads_cut_the_loads_and_cache_off_moves_them_to_global():
    params = {**get_rung(12).defaults(), "WPTM": 8, "WPTN": 8}
    base = bound(12, params, 1024)
    vec = bound(12, {**params, "VWM": 4, "VWN": 2}, 1024)
    assert base.step.loads == 16 and vec.step.loads == 8 / 4 + 8 / 2
    assert vec.term(model_bound.MIX).share > base.term(model_bound.MIX).share
    direct = bound(12, {**params, "CACHE_A": 0}, 1024)
    assert [r.space for r in direct.step.reads] == ["global", "local"]
    assert direct.term(model_bound.LOCAL).gflops > base.term(model_bound.LOCAL).gflops
    assert direct.occupancy.registers < base.occupancy.registers  # no A prefetch registers


def test_shuffles_replace_local_reads_but_still_take_issue_slots():
    params = {**get_rung(8).defaults(), "USE_SHUFFLE": 1, "SGS": 32}
    plain = bound(8, {**params, "USE_SHUFFLE": 0}, 1024)
    shuffled = bound(8, params, 1024)
    assert shuffled.step.other == params["WPTN"]
    assert shuffled.term(model_bound.LOCAL).gflops != plain.term(model_bound.LOCAL).gflops
    assert shuffled.term(model_bound.MIX).share < plain.term(model_bound.MIX).share


# -- the table of devices and the overrides --------------------------------------------------------
def test_hopper_from_the_table_and_the_device():
    hw = hardware_for("NVIDIA H100 80GB HBM3", DeviceLimits(compute_units=132), 1980)
    assert hw.peak_gflops == pytest.approx(128 * 132 * 1.98 * 2)
    assert hw.mem_gbps == 3350 and "H100" in hw.kind
    assert hw.source("compute_units") == "device" and hw.source("lanes_per_cu") == "table"
    assert hw.assumed() == []
    h200 = hardware_for("NVIDIA H200", DeviceLimits(compute_units=0), 0)
    assert h200.mem_gbps == 4800 and h200.compute_units == 132
    assert h200.source("compute_units") == "table"
    assert "H200" not in hardware_for("NVIDIA GH200 480GB", DeviceLimits(), 1980).kind


def test_cpus_by_instruction_set_and_the_fallbacks():
    cpu = DeviceLimits(compute_units=2, device_type="CPU", local_mem_bytes=1 << 20)
    avx512 = hardware_for("pthread-skylake-avx512-AMD EPYC", cpu, 2596)
    assert avx512.lanes_per_cu == 32 and avx512.simd_width == 16
    assert avx512.peak_gflops == pytest.approx(2 * 32 * 2 * 2.596)
    assert avx512.assumed() == ["mem_gbps"]
    assert hardware_for("pthread-haswell-Intel Xeon", cpu, 2000).lanes_per_cu == 16
    generic = hardware_for("pthread-generic", cpu, 2000)
    assert generic.kind.startswith("assumed") and "lanes_per_cu" in generic.assumed()
    gpu = hardware_for("Some Future GPU", DeviceLimits(compute_units=40), 1500)
    assert gpu.kind.startswith("assumed") and gpu.compute_units == 40
    assert any("[assumed]" in line for line in gpu.summary())


def test_overrides_replace_figures_and_say_so():
    hw = hardware_for("pthread-generic", DeviceLimits(compute_units=4, device_type="CPU"), 2000,
                      Overrides(peak_gflops=500, local_gbps=64, mem_gbps=12))
    assert hw.peak_gflops == pytest.approx(500)
    assert hw.local_gbps_per_cu == pytest.approx(64) and hw.mem_gbps == 12
    assert hw.source("peak_gflops") == "--peak-gflops" and hw.source("mem_gbps") == "--mem-gbps"
    assert "[--peak-gflops]" in hw.summary()[1]


@pytest.mark.parametrize("bad", [0, -1.5, math.nan, math.inf])
def test_overrides_must_be_positive(bad):
    with pytest.raises(UsageError, match="--mem-gbps"):
        Overrides(mem_gbps=bad)


# -- committed measurements never beat their bound --------------------------------------------
MEASURED = measurements(RESULTS, TUNING)
RECORDS = device_records(RESULTS)


def test_every_kind_of_committed_result_is_covered():
    assert {m.kind for m in MEASURED} == {"database", "journal", "ladder", "vs-defaults",
                                           "bench"}
    h100 = {m.device_key for m in MEASURED if "h100" in m.device_key}
    assert len(h100) == 2 and h100 <= set(RECORDS)


#: how far above its bound a CPU's measurement may lie: a CPU reports its base clock (in a
#: virtual machine PoCL has nothing else to read) and x86 server CPUs boost to 1.2-1.5 times
#: it, so the bound counted at the reported clock is no ceiling there (docs/model.md)
CPU_BOOST = 1.5


@pytest.mark.parametrize("key", sorted({m.device_key for m in MEASURED}))
def test_committed_results_stay_within_their_bound(key):
    if key not in RECORDS:
        pytest.skip(f"no ladder or bench file records device {key}")
    hw = hardware_from_record(RECORDS[key])
    ceiling = 100.0 * (CPU_BOOST if hw.device_type == "CPU" else 1.0)
    mine = [m for m in MEASURED if m.device_key == key]
    assert mine
    for m in mine:
        b = model_bound.bound(get_rung(m.rung), m.params, m.problem, hw)
        assert b.percent(m.gflops, helpers=m.helpers) <= ceiling, (m, b.gflops, b.limit)


# -- where the bound is shown ----------------------------------------------------------------------
def test_model_command_explains_one_rung(capsys):
    assert main(["model", "--rung", "7", "--size", "256", "--defaults"]) == 0
    out = capsys.readouterr().out
    for word in ("instruction mix", "local memory", "latency", "work distribution",
                 "global memory", "limited by", "[assumed]", "peak"):
        assert word in out


@pytest.mark.parametrize("results", ["default", "a folder of its own"])
def test_model_command_on_a_recorded_device_as_json(capsys, monkeypatch, tmp_path, results):
    """The recorded H100's rungs run its shipped tuning, wherever results are written."""
    monkeypatch.delenv("CLGEMM_SHIPPED_TUNING", raising=False)
    if results == "default":
        monkeypatch.delenv("CLGEMM_RESULTS", raising=False)
    else:
        monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    record = RESULTS / "h100" / "ladder-opencl-4096-tuned.json"
    assert main(["model", "--device-record", str(record), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "H100" in data["hardware"]["kind"] and len(data["rungs"]) == 10
    seven = next(r for r in data["rungs"] if r["rung"] == 7)
    assert seven["source"] == "tuned" and seven["bound"]["limit"] == model_bound.MIX


@pytest.mark.parametrize("args, needle", [
    (["model", "--rung", "15"], "no rung 15"),
    (["model", "--rung", "7", "-p", "TSM=100"], "TSM"),
    (["model", "--rung", "6", "--size", "100", "--defaults"], "cannot do"),
    (["model", "--peak-gflops", "-5"], "--peak-gflops"),
    (["model", "--device-record", "/nonexistent/x.json"], "--device-record"),
    (["model", "--device-record", "x.json", "--device", "0"], "either"),
    (["ladder", "--size", "64", "--mem-gbps", "0"], "--mem-gbps"),
])
def test_model_command_bad_input_one_line_exit_2(capsys, args, needle):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and needle in err[0]


@pytest.mark.parametrize("field, value, needle", [
    ("compute_units", "x", 'compute_units must be a positive integer, not "x"'),
    ("max_work_item_sizes", 5, "max_work_item_sizes must be a list of positive integers, not 5"),
    ("name", 3, "name must be a string, not 3"),
    ("local_mem_bytes", -1, "local_mem_bytes must be a positive integer, not -1"),
    ("clock_mhz", None, "clock_mhz must be a non-negative integer, not null"),
    ("max_work_group_size", 1.5, "max_work_group_size must be a positive integer, not 1.5"),
    ("sub_group_sizes", "ab", 'sub_group_sizes must be a list of positive integers, not "ab"'),
])
def test_device_record_with_a_field_of_the_wrong_type(tmp_path, capsys, field, value, needle):
    record = json.loads((RESULTS / "h100" / "ladder-opencl-4096-tuned.json").read_text())
    record["device"][field] = value
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    assert main(["model", "--device-record", str(path), "--size", "256"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0] == f"error: --device-record {path}: {needle}", err


def test_ladder_table_and_json_show_the_bound(device):
    params = {**get_rung(6).defaults(), "TSM": 64, "TSN": 64, "WPTM": 4, "WPTN": 4}
    problem = Problem(256, 256, 256)
    rows = [RunResult(6, "2D register blocking", params, "ok", ms=1.0,
                      gflops=problem.gflops(1.0)),
            RunResult(1, "naive", {"TS": 16}, "build-failed", message="x")]
    hw = apply_overrides(hardware_for(device.name, device.limits(), device.clock_mhz),
                         Overrides(peak_gflops=1000))
    run = LadderRun(device, problem, rows, [], {6: "user"}, "test", hardware=hw)
    text = ladder_table(run)
    assert "% bound" in text and "rung 6: bound" in text and "[--peak-gflops]" in text
    expected = run.bounds()[6].percent(problem.gflops(1.0))
    assert f"{expected:.1f}" in text
    row = run.to_json()["rows"][0]
    assert row["pct_of_bound"] == pytest.approx(expected) and row["bound_limit"]
    assert run.to_json()["bound_hardware"]["peak_gflops"] == pytest.approx(1000)


def test_bench_rows_get_the_best_rungs_bound(device):
    params = {**get_rung(6).defaults(), "TSM": 64, "TSN": 64, "WPTM": 4, "WPTN": 4}
    row = {"shape": [256, 256, 256], "status": "ok", "note": "", "input_sets": 1,
           "best": {"rung": 6, "name": "2D register blocking", "params": params,
                    "gflops": 10.0, "ms": 3.3}, "rungs": [], "references": [], "ratios": {}}
    hw = hardware_for(device.name, device.limits(), device.clock_mhz)
    add_bound(row, hw)
    b = model_bound.bound(get_rung(6), params, Problem(256, 256, 256), hw)
    assert row["bound"]["gflops"] == pytest.approx(b.gflops_with_helpers())
    assert row["bound"]["pct"] == pytest.approx(1000.0 / b.gflops_with_helpers())
    run = BenchRun(device, [row], {}, "test", hw)
    csv_row = run.csv_rows()[0]
    assert csv_row["best_bound_limit"] == b.limit
    assert csv_row["best_pct_of_bound"] == pytest.approx(row["bound"]["pct"])
    assert "% bound" in run.table() and f"limited by {b.limit}" in run.table()
    assert run.to_json()["bound_hardware"]["name"] == device.name


def test_the_skinny_kernel_is_bounded_by_reading_the_long_operand_either_way():
    """Kernel 14 reads its long operand once, whichever side of C is short: the same bound for
    M x 16 and 16 x N (it computes C^T for the second), and global memory the limit where the
    short side is narrow."""
    params = get_rung(14).resolve({"LR": 16, "LK": 16, "VR": 4, "SB": 16})
    tall = bound(14, params, (4096, 16, 4096), toy(mem_gbps=50))
    wide = bound(14, params, (16, 4096, 4096), toy(mem_gbps=50))
    assert tall.gflops == wide.gflops and tall.limit == model_bound.GLOBAL
    assert step_for(get_rung(14), params).fmas == 4 * 16


def test_a_stack_is_one_grid_in_the_bound():
    """A stack of small products is one launch whose work-groups fill the device between them:
    its bound counts every product's tiles and bytes, so that a stack measured far above one
    product's bound is not a broken bound."""
    hw = hardware_for("NVIDIA H100 80GB HBM3", DeviceLimits(compute_units=132), 1980)
    tiled = get_rung(12)
    params = {"TSM": 64, "TSN": 64, "TSK": 16, "WPTM": 4, "WPTN": 8}
    one = model_bound.bound(tiled, params, Problem(64, 64, 64), hw)
    stack = model_bound.bound(tiled, params, Problem(64, 64, 64, batch=1000), hw)
    assert one.work_groups == 1 and stack.work_groups == 1000
    assert one.limit == "work distribution" and stack.gflops > 50 * one.gflops
    assert stack.dram_bytes == 1000 * one.dram_bytes


def test_a_vector_wider_than_a_load_takes_several():
    """A float8 of local memory is two 128-bit loads on an NVIDIA GPU: Nsight Compute counted
    8 local loads per step (140.5 million for 16.8 million warp steps) where the tiled kernel
    reads 8 x 16 sums' values as four float2 of A and two float8 of B (results/h100/gap)."""
    params = {**get_rung(12).defaults(), "TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 8, "WPTN": 16,
              "WIDTH": 4, "VWM": 2, "VWN": 8}
    step = step_for(get_rung(12), params)
    assert step.loads == 6
    assert step.in_loads_of(4).loads == 8
    assert step.in_loads_of(16).loads == 6
    b = model_bound.bound(get_rung(12), params, Problem(4096, 4096, 4096), TOY)
    assert b.step.loads == 8
    # the bytes read stay what they were
    assert (sum(r.count * r.width for r in b.step.reads)
            == sum(r.count * r.width for r in step.reads))
