"""Vendor references: CLBlast through PoCL gives the right product, a missing library is a note,
a wrong one is never the yardstick, and the ladder shows "% of reference"."""

from __future__ import annotations

import numpy as np
import pytest

from clgemm.backends.opencl import clblast
from clgemm.cli.ladder_tables import ladder_table
from clgemm.core.problem import Problem
from clgemm.measure import references as refs
from clgemm.measure.ladder import run_ladder
from clgemm.measure.rung_runner import Workspace

CLBLAST, WHY_NOT = clblast.load_clblast()


@pytest.fixture
def opencl_backend(backend):
    if backend.name != "opencl":
        pytest.skip("needs an OpenCL device")
    return backend


@pytest.mark.skipif(CLBLAST is None, reason=f"CLBlast unavailable: {WHY_NOT}")
@pytest.mark.parametrize("size", [(64, 64, 64), (37, 50, 23), (128, 32, 96)])
def test_clblast_matches_float64(opencl_backend, size):
    ws = Workspace(opencl_backend, Problem(*size), seed=sum(size))
    row = refs.vendor_reference(opencl_backend, ws, warmup=1, repeats=2)
    assert row["status"] == "ok", row
    assert row["rel_error"] < 1e-5
    assert row["ms"] > 0 and row["gflops"] > 0
    assert row["timing"]


def test_missing_clblast_is_a_note(opencl_backend, monkeypatch):
    monkeypatch.setattr(clblast, "_loaded", None)
    monkeypatch.setattr(clblast, "_NAMES", ("libclgemm-no-such-blas.so",))
    monkeypatch.setenv("CLGEMM_CLBLAST_LIB", "")
    monkeypatch.setattr(clblast.ctypes.util, "find_library", lambda name: None)
    ws = Workspace(opencl_backend, Problem(32, 32, 32))
    rows = refs.collect_references(opencl_backend, ws, warmup=0, repeats=1)
    assert [r["name"].split()[0] for r in rows] == ["NumPy", "CLBlast"]
    assert rows[1]["status"] == "unavailable" and "libclblast" in rows[1]["note"]
    assert rows[1]["ms"] is None
    assert refs.baseline(rows) is rows[0]  # NumPy, the fallback


def test_wrong_result_is_reported_not_trusted(opencl_backend):
    ws = Workspace(opencl_backend, Problem(16, 16, 16))
    bad = ws.ref.astype(np.float32) * 1.01
    row = refs._judged(refs._row("Some BLAS", "here", "ok"), bad, ws, 1e-4)
    assert row["status"] == "wrong" and "not used as reference" in row["note"]
    holes = ws.ref.astype(np.float32)
    holes[3, 4] = np.nan
    row = refs._judged(refs._row("Some BLAS", "here", "ok"), holes, ws, 1e-4)
    assert row["status"] == "wrong" and "1 of 256 elements" in row["note"]
    numpy_row = refs.numpy_reference(ws, repeats=1)
    wrong_vendor = dict(refs._row("Some BLAS", "here", "wrong"), gflops=1e9)
    assert refs.baseline([numpy_row, wrong_vendor]) is numpy_row
    good_vendor = dict(refs._row("Some BLAS", "here", "ok"), gflops=2 * numpy_row["gflops"])
    assert refs.baseline([numpy_row, good_vendor]) is good_vendor
    assert refs.percent_of(good_vendor["gflops"] / 4, good_vendor) == pytest.approx(25.0)
    assert refs.percent_of(None, good_vendor) is None and refs.percent_of(1.0, None) is None


def test_ladder_reports_percent_of_reference(device):
    run = run_ladder(device, [1, 2], Problem(64, 64, 64), warmup=0, repeats=1)
    base = run.reference()
    assert base is not None
    if CLBLAST is not None and device.backend == "opencl":
        assert base["name"].startswith("CLBlast")
    data = run.to_json()
    assert data["pct_of_reference_base"] == base["name"]
    for row in data["rows"]:
        assert row["pct_of_reference"] == pytest.approx(100 * row["gflops"] / base["gflops"])
    assert data["references"][0]["name"].startswith("NumPy")
    table = ladder_table(run)
    assert "% ref" in table and f"share of {base['name']}" in table
