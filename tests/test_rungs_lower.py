"""Rungs 1-5 on the default device: correct at their defaults and at other valid parameter sets,
refusing invalid ones by the constraint's name."""

from __future__ import annotations

import dataclasses

import pytest

from clgemm.core.errors import BuildError, ConstraintError, UsageError
from clgemm.measure.rung_runner import run_rung
from clgemm.rungs import get_rung, parse_rungs

# (rung, parameters, sizes M N K it supports)
CASES = [
    (1, {}, [(64, 64, 64), (128, 32, 96)]),
    (1, {"TS": 8}, [(64, 64, 64), (40, 16, 7)]),
    (1, {"TS": 4}, [(12, 20, 5)]),
    (2, {}, [(64, 64, 64), (128, 32, 96)]),
    (2, {"TS": 8}, [(64, 128, 64), (24, 16, 40)]),
    (2, {"TS": 32}, [(64, 64, 96)]),
    (3, {}, [(64, 64, 64), (128, 96, 64)]),
    (3, {"TS": 16, "WPT": 4}, [(64, 64, 64), (48, 32, 80)]),
    (3, {"TS": 64, "WPT": 16}, [(128, 64, 128)]),
    (4, {}, [(64, 64, 64), (128, 96, 64)]),
    (4, {"TS": 16, "WIDTH": 2}, [(64, 64, 64), (48, 32, 80)]),
    (4, {"TS": 16, "WIDTH": 8}, [(32, 48, 16)]),
    (4, {"TS": 8, "WIDTH": 1}, [(24, 16, 40)]),
    (5, {}, [(64, 64, 64), (128, 192, 96)]),
    (5, {"TSM": 32, "TSN": 64, "TSK": 16, "WPTN": 4, "PAD": 0}, [(64, 128, 32), (96, 64, 48)]),
    (5, {"TSM": 16, "TSN": 32, "TSK": 16, "WPTN": 4, "PAD": 1}, [(48, 96, 32)]),
]


@pytest.mark.parametrize("number,overrides,sizes", CASES,
                         ids=[f"rung{c[0]}-{c[1] or 'defaults'}" for c in CASES])
def test_rung_correct(backend, workspace_for, number, overrides, sizes):
    rung = get_rung(number)
    params = rung.resolve(overrides)
    rung.validate(params, backend.device.limits())
    for m, n, k in sizes:
        res = run_rung(backend, workspace_for(m, n, k), rung, params, repeats=1, warmup=0)
        assert res.status == "ok", (m, n, k, res.message)
        assert res.rel_error < 1e-5
        assert res.ms > 0 and res.gflops > 0


@pytest.mark.parametrize("number,overrides,constraint", [
    (3, {"TS": 32, "WPT": 3}, "TS % WPT == 0"),
    (4, {"TS": 16, "WIDTH": 32}, "TS % WIDTH == 0"),
    (4, {"TS": 32, "WIDTH": 16}, "WIDTH is 1, 2, 4 or 8"),
    (4, {"TS": 48, "WIDTH": 6}, "WIDTH is 1, 2, 4 or 8"),
    (5, {"TSN": 64, "WPTN": 3}, "TSN % WPTN == 0"),
    (5, {"TSM": 16, "TSN": 16, "TSK": 8, "WPTN": 1}, "TSK*TSM % work-items == 0 (whole A-tile loads)"),
    (1, {"TS": 0}, "parameters within their minimum values"),
])
def test_constraint_refused_by_name(number, overrides, constraint):
    rung = get_rung(number)
    with pytest.raises(ConstraintError) as info:
        rung.validate(rung.resolve(overrides))
    assert info.value.constraint == constraint
    assert constraint in str(info.value)


def test_device_limit_refused_by_name():
    from clgemm.devices.limits import DeviceLimits

    small = DeviceLimits(max_work_group_size=256, local_mem_bytes=16 * 1024)
    rung = get_rung(2)
    with pytest.raises(ConstraintError) as info:
        rung.validate(rung.resolve({"TS": 32}), small)
    assert info.value.constraint == "work-group size <= device maximum"
    rung5 = get_rung(5)
    with pytest.raises(ConstraintError) as info:
        rung5.validate(rung5.resolve({"TSM": 32, "TSN": 128, "TSK": 64, "WPTN": 16}), small)
    assert info.value.constraint == "local memory <= device local memory"


def test_unknown_parameter_refused():
    with pytest.raises(UsageError, match="rung 1 has no parameter WPT"):
        get_rung(1).resolve({"WPT": 2})


def test_unsupported_size_is_a_status(backend, workspace_for):
    rung = get_rung(2)
    res = run_rung(backend, workspace_for(30, 32, 32), rung, rung.defaults(), repeats=1)
    assert res.status == "unsupported-size"
    assert "M=30" in res.message


def test_build_failure_is_a_status(backend, workspace_for, tmp_path):
    broken = tmp_path / "broken.cl"
    broken.write_text("__kernel void gemm_naive(this is not C) {}\n")
    rung = dataclasses.replace(get_rung(1), file=str(broken))
    res = run_rung(backend, workspace_for(64, 64, 64), rung, rung.defaults(), repeats=1)
    assert res.status == "build-failed"


def test_build_error_names_the_compilers_first_error(backend):
    """The one-line message is the compiler's first error, not the runtime's status code; the
    whole build log stays on the exception."""
    source = "__kernel void f(__global float* x) { x[0] = undeclared_thing; }\n"
    with pytest.raises(BuildError) as info:
        backend.build(source, {"TS": 1}, "f")
    message = str(info.value)
    assert message.startswith("build failed: ") and "\n" not in message
    assert "undeclared_thing" in message
    assert "BUILD_PROGRAM_FAILURE" not in message
    assert "undeclared_thing" in info.value.log


def test_ladder_row_of_a_build_failure_shows_the_compilers_error(backend, device, workspace_for):
    """Rung 4 at a width its kernel has no multiply-add for (its constraint lifted here): the
    row says once that the build failed, and which identifier the compiler missed."""
    from clgemm.cli.ladder_tables import ladder_table
    from clgemm.measure.ladder import LadderRun

    rung = dataclasses.replace(get_rung(4), constraints=())
    problem = workspace_for(64, 64, 64).problem
    res = run_rung(backend, workspace_for(64, 64, 64), rung, {"TS": 32, "WIDTH": 16}, repeats=1)
    assert res.status == "build-failed" and "MAC_VECTOR" in res.message
    row = next(ln for ln in ladder_table(LadderRun(device, problem, [res], [], {}, "test"))
               .splitlines() if ln.startswith("4 "))
    assert "build-failed: error: source:" in row and "build failed" not in row


def test_unwritten_output_is_caught(backend, workspace_for, tmp_path):
    """A kernel that skips the last column must fail the check: the output is poisoned."""
    src = (get_rung(1).file)
    from clgemm.core.paths import KERNELS

    text = (KERNELS / src).read_text().replace("C[n * M + m] = acc;",
                                                "if (n < N - 1) C[n * M + m] = acc;")
    lazy = tmp_path / "lazy.cl"
    lazy.write_text(text)
    rung = dataclasses.replace(get_rung(1), file=str(lazy))
    res = run_rung(backend, workspace_for(64, 64, 64), rung, rung.defaults(), repeats=1)
    assert res.status == "wrong"
    assert "64 of 4096 elements unwritten" in res.message


def test_parse_rungs():
    assert parse_rungs("1-3,5") == [1, 2, 3, 5]
    for bad in ("x", "3-1", "0", "99"):
        with pytest.raises(UsageError):
            parse_rungs(bad)
