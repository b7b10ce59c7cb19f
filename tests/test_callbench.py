"""bench --call: what a user's call costs, checked like every result; the launch log it reads
kernel times from; the CLBlast parameter file it passes to the library."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

import clgemm
from clgemm.cli import main
from clgemm.core.errors import UsageError
from clgemm.library import gemm as api
from clgemm.measure import call_bench, call_timing


def test_call_bench_numpy_and_device_arrays(tmp_path, capsys):
    out = tmp_path / "calls.json"
    assert main(["bench", "--call", "--sizes", "64,33x17x9", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["format"] == call_bench.FORMAT and data["provenance"]["mode"] in ("numpy",
                                                                                  "device")
    for row in data["rows"]:
        assert row["status"] == "ok", row
        assert row["rel_error"] <= 1e-4 and row["call_ms"] > 0 and row["kernel_ms"] > 0
        assert row["launches"] >= 1 and row["choice"]
        assert all(r["status"] in ("ok", "failed") for r in row["references"].values())
    text = capsys.readouterr().out
    assert "gemm()" in text.splitlines()[0] and "64x64x64" in text
    out2 = tmp_path / "device.json"
    assert main(["bench", "--call", "--arrays", "device", "--sizes", "40x24x8",
                 "--json", str(out2)]) == 0
    assert json.loads(out2.read_text())["rows"][0]["status"] == "ok"


def test_checked_error_catches_a_wrong_element(monkeypatch):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((50, 30), dtype=np.float32)
    b = rng.standard_normal((30, 40), dtype=np.float32)
    c = (a.astype(np.float64) @ b).astype(np.float32)
    for full in (2**33, 0):  # the whole product, then the random-vector check
        monkeypatch.setattr(call_bench, "FULL_CHECK", full)
        assert call_bench.checked_error(a, b, c) < 1e-6
        bad = c.copy()
        bad[17, 23] += 10.0
        assert call_bench.checked_error(a, b, bad) > 1e-4
        bad[17, 23] = np.nan
        assert call_bench.checked_error(a, b, bad) == float("inf")


def test_launch_log_names_every_launch(device):
    be = api.backend_for(device)
    a = np.ones((24, 16), np.float32)
    with be.observe() as log:
        clgemm.gemm(a, a.T.copy(), device=device)
    times = log.times()
    assert times and all(ms >= 0 for _, ms in times)
    assert all(name != "?" for name, _ in times)
    assert be._logged() is None  # closed: the library path records nothing


@pytest.mark.parametrize("params,why", [
    ({"MWG": 64, "X -DY": 1}, "not a parameter name"),
    ({"MWG": 64.5}, "not a parameter name with a non-negative integer"),
    ({"MWG": True}, "non-negative integer"),
    ({}, "no 'params'"),
])
def test_clblast_params_file_checked(tmp_path, params, why):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"params": params}))
    with pytest.raises(UsageError, match=why):
        call_bench.read_clblast_params(str(path))


def _call_data(ratio_to_numpy: float) -> dict:
    """A call bench of one shape where gemm() reaches `ratio_to_numpy` of NumPy's GFLOP/s."""
    return {"rows": [{"shape": [1, 1, 1], "status": "ok", "note": "",
                      "choice": "direct kernel (default)", "call_gflops": ratio_to_numpy,
                      "call_ms": 2e-6 / ratio_to_numpy,
                      "kernel_gflops": 0.01, "overhead_ms": 0.05,
                      "references": {"NumPy": {"status": "ok", "gflops": 1.0, "ms": 2e-6},
                                     "CLBlast": {"status": "failed", "gflops": None}}}]}


def test_geo_mean_of_ratios_that_round_to_zero():
    """A 1x1x1 call is thousands of times slower than NumPy's: its ratio prints as 0.00 with two
    decimals, and a geo-mean taken over the printed ratios was log(0)."""
    text = call_bench.table(_call_data(0.0004))
    assert "NumPy: geo-mean 0.0004, lowest 0.0004" in text
    assert "CLBlast: geo-mean" not in text   # no ratio at all: no mean
    assert call_bench.geo_mean([4.0, None, 1.0, 0.0]) == pytest.approx(2.0)
    assert call_bench.geo_mean([None, 0.0]) is None


def test_call_bench_of_a_1x1x1_product(capsys):
    assert main(["bench", "--call", "--sizes", "1"]) == 0
    assert "geo-mean" in capsys.readouterr().out


def test_calls_are_timed_only_once_warm(monkeypatch):
    """A process's first calls can run twice as long as the rest (the driver's and the clocks'
    warming): the batches start only after WARM_S of calls, each drained, so the first shape of
    a run is timed as the others are. On a clock where calls take 2 ms for their first 0.24 s
    and 1 ms after (which, timed at once, would give a median batch of 1.18 ms), the time per
    call is 1 ms."""
    clock = [0.0]

    def call() -> None:
        clock[0] += 0.002 if clock[0] < 0.24 else 0.001

    monkeypatch.setattr(call_timing, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    assert call_timing.WARM_S > 0.24
    assert call_timing.per_call_ms(call, lambda: None) == pytest.approx(1.0)


def test_calls_compared_are_timed_in_turns(monkeypatch):
    """Two calls of equal cost on a clock whose calls grow slower as the run goes on: timed one
    after the other, the later one reads slower by the drift over a whole timing; in turns,
    each batch of one sits beside a batch of the other and the two read within one batch's
    drift. A library that raises while timed is left out of the turns and its failure
    returned."""
    clock = [0.0]

    def call() -> None:
        clock[0] += 0.001 * (1 + clock[0] / 10)

    def sync() -> None:
        pass

    monkeypatch.setattr(call_timing, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    one, other = call_timing.per_call_ms_in_turns([call, call], sync)
    clock[0] = 0.0
    first, later = (call_timing.per_call_ms(call, sync) for _ in range(2))
    assert isinstance(one, float) and isinstance(other, float)
    assert abs(other - one) < (later - first) / 3

    def broken() -> None:
        call()
        if clock[0] > 1.0:
            raise RuntimeError("lost the device")

    clock[0] = 0.0
    got = call_timing.per_call_ms_in_turns([call, broken], sync)
    assert isinstance(got[0], float) and isinstance(got[1], RuntimeError)


def test_gemm_is_compared_with_each_library_beside_it():
    """The ratio to a library is taken against gemm()'s time measured in turns with it, where a
    run records one; runs written before that take gemm()'s own time."""
    row = {"status": "ok", "call_ms": 0.020,
           "references": {"now": {"status": "ok", "ms": 0.030, "beside_ms": 0.015},
                          "before": {"status": "ok", "ms": 0.030},
                          "failed": {"status": "failed"}}}
    assert call_bench.gemm_over(row, row["references"]["now"]) == pytest.approx(2.0)
    assert call_bench.gemm_over(row, row["references"]["before"]) == pytest.approx(1.5)
    assert call_bench.gemm_over(row, row["references"]["failed"]) is None
    assert call_bench.ratios({"rows": [row]}) == {"before": [pytest.approx(1.5)],
                                                  "failed": [None], "now": [pytest.approx(2.0)]}
