"""The account of a launch's share of the FMA peak from Nsight Compute's printouts: the factors
on a made-up printout, checked by hand; the committed H100 printouts, whose factors must
multiply to the share their duration gives; and the files `--counters` refuses."""

from __future__ import annotations

import json

import pytest

from clgemm.cli import main
from clgemm.core.paths import RESULTS
from clgemm.devices.hardware import Overrides, hardware_for_device
from clgemm.devices.record import device_from_record
from clgemm.model.counters import CountersError, parse_counters, read_counters
from clgemm.model.gap import account

RECORD = RESULTS / "h100" / "head-check" / "kernel-cuda.json"
PRINTOUTS = RESULTS / "h100" / "gap-account"
#: the tiled kernel's configuration the committed printouts ran (gemm()'s at 4096 cubed then)
PROFILED = ["-p", "TSM=64", "-p", "TSN=64", "-p", "TSK=16", "-p", "WPTM=8", "-p", "WPTN=8",
            "-p", "VWM=2", "-p", "VWN=8", "-p", "PIPELINE=2", "-p", "RASTER=8", "-p",
            "UNROLL_K=1"]


def _printout(kernel: str = "toy_kernel (4, 2, 1)x(64, 1, 1)", **rows: str) -> str:
    """A printout as ncu writes one: a heading per launch, then rows of name, unit, value."""
    table = {"Elapsed Cycles": "cycle    1,000", "SM Active Cycles": "cycle      800",
             "Executed Instructions": "inst 5,120", "# SMs": "SM     2",
             "Duration": "us    1.00", "SM Frequency": "Ghz    1.00",
             "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": "inst   131,072",
             "smsp__inst_executed_op_shared_ld.sum": "inst    512",
             **rows}
    lines = ["# a comment line: ncu --metrics ... python3 x.py", "==PROF== Connected",
             f"  {kernel}, Context 1, Stream 7, Device 0, CC 9.0",
             "    Section: Something", "    ---- ---- ----",
             "    Metric Name    Metric Unit Metric Value"]
    lines += [f"    {name:<40}  {value}" for name, value in table.items() if value]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def h100():
    return hardware_for_device(device_from_record(str(RECORD)), Overrides())


def test_factors_on_a_made_up_printout(h100):
    """2 units x 4 schedulers x 800 active cycles = 6,400 issue slots, 5,120 taken; 131,072
    FMAs make 4,096 whole-warp instructions, 80% of those issued: 0.8 x 0.8 x 0.8 = 51.2%."""
    c = parse_counters({"toy.txt": _printout()})
    assert (c.kernel, c.grid, c.block, c.sms) == ("toy_kernel", (4, 2, 1), (64, 1, 1), 2)
    assert c.duration_ms == pytest.approx(0.001) and c.sm_ghz == 1.0
    a = account(c, h100, flops=2 * 131_072)
    shares = {f.name: f.measured for f in a.factors}
    assert shares == pytest.approx({"units busy": 0.8, "issue slots taken": 0.8,
                                    "FMAs among instructions": 0.8})
    assert a.share == pytest.approx(0.512)
    # 262,144 FLOPs in 1,000 clocks (1 us at 1 GHz) on 2 units of 256 FLOPs a clock: 51.2%
    assert a.share_from_time == pytest.approx(0.512)
    assert "0.125 local loads" in a.factors[2].why
    assert not a.notes


def test_a_launch_of_another_size_is_named(h100):
    a = account(parse_counters({"toy.txt": _printout()}), h100, flops=4 * 131_072)
    assert any("another size" in note for note in a.notes)


@pytest.mark.parametrize("size", [4096, 8192])
@pytest.mark.parametrize("kernel", ["cublas", "tiled"])
def test_committed_printouts_multiply_to_their_measured_share(h100, kernel, size):
    """The three factors, counted per instruction, give the share that the launch's duration at
    its clock gives: the account leaves nothing out."""
    c = read_counters((str(PRINTOUTS / f"ncu-{kernel}-{size}.txt"),))
    assert size ** 3 <= c.ffma_threads <= size ** 3 + size ** 2   # cuBLAS: alpha and beta too
    a = account(c, h100, flops=2 * size ** 3)
    assert a.share_from_time is not None
    assert a.share == pytest.approx(a.share_from_time, rel=0.01)
    assert 0.6 < a.share < 0.9


def test_model_command_sets_the_account_beside_the_bound(capsys):
    args = ["model", "--device-record", str(RECORD), "--rung", "tiled", "--size", "4096",
            "--defaults", *PROFILED, "--counters", str(PRINTOUTS / "ncu-tiled-4096.txt"),
            "--json"]
    assert main(args) == 0
    row = json.loads(capsys.readouterr().out)["rungs"][0]
    measured = row["measured"]
    names = [f["name"] for f in measured["factors"]]
    assert names == ["units busy", "issue slots taken", "FMAs among instructions"]
    assert measured["bound_share_of_peak"] > measured["share_of_peak"]
    assert not measured["notes"], measured["notes"]
    bound_terms = row["bound"]["terms"]
    assert measured["factors"][1]["assumed"] == bound_terms["latency"]["share"]


@pytest.mark.parametrize("text, needle", [
    ("no heading here\n    Elapsed Cycles  cycle  1,000\n", "holds no launch"),
    (_printout() + _printout("other (1, 1, 1)x(32, 1, 1)"), "2 different launches"),
    (_printout(**{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": ""}),
     "lack smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
])
def test_printouts_that_are_not_one_launch_are_refused(text, needle):
    with pytest.raises(CountersError, match=needle):
        parse_counters({"x.txt": text})


def test_files_of_two_launches_are_refused():
    with pytest.raises(CountersError, match="different launches"):
        parse_counters({"a.txt": _printout(),
                        "b.txt": _printout("toy_kernel (8, 2, 1)x(64, 1, 1)")})


def test_a_duration_in_another_unit_is_scaled():
    c = parse_counters({"x.txt": _printout(Duration="ms    0.002")})
    assert c.duration_ms == pytest.approx(0.002)
    c = parse_counters({"x.txt": _printout(Duration="furlong    2")})
    assert c.duration_ms is None


@pytest.mark.parametrize("extra, needle", [
    (["--counters", "/nonexistent/ncu.txt", "--rung", "tiled"], "/nonexistent/ncu.txt"),
    (["--counters", str(PRINTOUTS / "ncu-tiled-4096.txt")], "--counters needs --rung"),
])
def test_model_command_bad_counters_one_line_exit_2(capsys, extra, needle):
    assert main(["model", "--device-record", str(RECORD), "--size", "4096", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and needle in err[0], err

