"""`clgemm bench`: size parsing, interleaved timing, the best rung never a wrong one, and a tiny
bench on the test device that writes JSON and CSV with ratios to NumPy and CLBlast."""

from __future__ import annotations

import csv
import dataclasses
import json

import pytest

from clgemm.backends import vendor_blas
from clgemm.backends.opencl import load_clblast
from clgemm.cli import main
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem, parse_sizes
from clgemm.library import gemm as api
from clgemm.measure import bench
from clgemm.measure import references as refs
from clgemm.measure.bench import run as bench_run_module
from clgemm.measure.bench import shape as bench_shape_module
from clgemm.measure.rung_runner import RunResult

CLBLAST, WHY_NOT = load_clblast()


@pytest.fixture
def empty_db(tmp_path, monkeypatch):
    """No tuned entries: every rung runs its defaults, whatever a tuning run has stored."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path / "results"))
    api.clear_caches()
    yield
    api.clear_caches()


# -- sizes -------------------------------------------------------------------------------------
def test_parse_sizes_good():
    assert parse_sizes("256") == [Problem(256, 256, 256)]
    assert parse_sizes(" 64 , 33x65x17,4096X4096x128,64") == [
        Problem(64, 64, 64), Problem(33, 65, 17), Problem(4096, 4096, 128)]


@pytest.mark.parametrize("text, named", [
    ("", "''"), ("0", "'0'"), ("64,-5", "'-5'"), ("2x3", "'2x3'"), ("64,abc", "'abc'"),
    ("64,", "''"), ("1x0x3", "'1x0x3'"), ("8x8x8x8", "'8x8x8x8'"), ("1.5", "'1.5'")])
def test_parse_sizes_bad(text, named):
    with pytest.raises(UsageError, match=f"--sizes: {named}"):
        parse_sizes(text)


def test_bad_sizes_on_the_command_line(capsys):
    assert main(["bench", "--sizes", "128,12y4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --sizes: '12y4'")
    assert main(["bench", "--sizes", "64", "--repeats", "0"]) == 2


def test_default_sizes(device):
    cpu = bench.default_sizes(dataclasses.replace(device, type="CPU"))
    assert Problem(2048, 2048, 2048) in cpu and Problem(1023, 1023, 1023) in cpu
    assert all(p.m <= 2048 for p in cpu)
    gpu = bench.default_sizes(dataclasses.replace(device, type="GPU"))
    squares = [p.m for p in gpu if p.m == p.n == p.k]
    assert squares == [256, 512, 1024, 2048, 4096, 8192, 1000, 1023, 2049, 4097]
    assert {(p.m, p.k) for p in gpu if p.k != p.m} == {(n, bs) for n in (4096, 8192)
                                                       for bs in (64, 128, 256)}


def test_input_sets_rotate_only_small_shapes(device):
    big = dataclasses.replace(device, global_mem_bytes=2**40)
    assert bench.input_sets(Problem(4096, 4096, 4096), big) == 1
    assert bench.input_sets(Problem(64, 64, 64), big) == bench.MAX_SETS
    n = bench.input_sets(Problem(1024, 1024, 1024), big)
    footprint = 3 * 4 * 1024**2
    assert 1 < n < bench.MAX_SETS and (n - 1) * footprint >= bench.ROTATE_BYTES


# -- interleaving ------------------------------------------------------------------------------
def _fakes(calls, ms=None, fail=()):
    def make(key):
        def timer(s):
            calls.append((key, s))
            if key in fail:
                raise RuntimeError("boom")
            return (ms or {}).get(key, 1.0)
        return bench.Contender(key, timer)
    return [make(k) for k in "ABC"]


def test_rounds_are_interleaved_and_rotated():
    calls = []
    cs = _fakes(calls)
    bench.measure(cs, warmup=1, repeats=3, sets=4)
    assert [k for k, _ in calls] == list("ABC" "BCA" "CAB" "ABC")  # warm-up, then 3 rounds
    assert [s for _, s in calls] == [i % 4 for i in range(12)]  # each call the next input set
    assert all(len(c.times) == 3 for c in cs)


def test_adaptive_repeats_and_failures():
    calls = []
    a, b, c = _fakes(calls, ms={"A": 1.0, "B": 100.0}, fail=("C",))
    bench.measure([a, b, c], warmup=1, repeats=None, target_s=0.05, cap=20)
    assert c.error.startswith("RuntimeError") and not c.times
    assert len(a.times) == 20  # 50 ms of 1 ms runs, capped at 20
    assert len(b.times) == bench.MIN_REPEATS  # never fewer than the minimum
    timed = [k for k, _ in calls[3:]]  # after the warm-up round A B C
    # rounds go on rotating (B C A, C A B, A B C, ...) while B needs runs; C is gone; then A
    # goes on alone
    assert timed[:6] == list("BAABAB") and set(timed[6:]) == {"A"}
    assert sum(1 for k, _ in calls if k == "C") == 1  # dropped after its failure


def test_a_wrong_rung_is_never_the_best():
    rows = [{"rung": 6, "status": "ok", "gflops": 10.0},
            {"rung": 7, "status": "wrong", "gflops": 1000.0},
            {"rung": 8, "status": "failed", "gflops": None},
            {"rung": 9, "status": "ok", "gflops": 12.0}]
    assert bench.pick_best(rows)["rung"] == 9
    assert bench.pick_best(rows[1:3]) is None


def test_wrong_contenders_on_the_device(backend, device, empty_db, monkeypatch):
    """A rung whose check fails and a library whose product is wrong are listed as wrong and
    never timed; the best rung is the correct one."""
    real_run_rung = bench_shape_module.run_rung

    def run_rung(backend, ws, rung, params, **kw):
        res = real_run_rung(backend, ws, rung, params, **kw)
        if rung.number == 10:
            return RunResult(10, rung.title, dict(params), "wrong", rel_error=0.5,
                             message="relative error 5.00e-01 > 1e-04")
        return res

    def wrong_numpy(ws, repeats, tolerance=1e-4):
        row = refs._row("NumPy (host BLAS, float32)", "host CPU", "ok")
        return refs._judged(row, ws.ref.astype("float32") * 1.01, ws, tolerance)

    monkeypatch.setattr(bench_shape_module, "run_rung", run_rung)
    monkeypatch.setattr(refs, "numpy_reference", wrong_numpy)
    row = bench.bench_shape(backend, device, Problem(64, 64, 64), rungs=[4, 10], repeats=2,
                            warmup=0)
    assert row["best"]["rung"] == 4
    by_rung = {r["rung"]: r for r in row["rungs"]}
    assert by_rung[10]["status"] == "wrong" and by_rung[10]["repeats"] == 0
    numpy_row = next(r for r in row["references"] if r["key"] == "numpy")
    assert numpy_row["status"] == "wrong" and "numpy" not in row["ratios"]
    assert "rung 10 wrong" in bench_run_module._notes(row) and "NumPy wrong" in bench_run_module._notes(row)


def test_too_large_is_skipped_with_a_note(backend, device):
    tiny = dataclasses.replace(device, max_alloc_bytes=4096)
    row = bench.bench_shape(backend, tiny, Problem(64, 64, 64), rungs=[10], repeats=1)
    assert row["status"] == "skipped" and "per allocation" in row["note"]
    assert row["best"] is None and row["rungs"] == []


# -- a tiny bench, end to end ------------------------------------------------------------------
def test_tiny_bench_json_and_csv(device, empty_db, tmp_path, capsys, monkeypatch):
    js, cs = tmp_path / "bench.json", tmp_path / "bench.csv"
    argv = ["bench", "--device", str(device.index), "--backend", device.backend,
            "--sizes", "64,33x65x17", "--repeats", "2", "--json", str(js), "--csv", str(cs)]
    monkeypatch.setattr("sys.argv", ["clgemm", *argv])  # what provenance records
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "64x64x64" in out.out and "33x65x17" in out.out and "x NumPy" in out.out
    assert "[2/2] 33x65x17" in out.err  # progress goes to stderr

    data = json.loads(js.read_text())
    assert data["format"] == "clgemm-bench" and data["device"]["key"] == device.key
    assert data["provenance"]["command"].startswith("clgemm bench")
    assert [r["shape"] for r in data["rows"]] == [[64, 64, 64], [33, 65, 17]]
    vendor = vendor_blas(device.backend).key
    for r in data["rows"]:
        assert r["status"] == "ok", r
        best = r["best"]
        assert best["status"] == "ok" and best["rel_error"] < 1e-5 and best["repeats"] == 2
        assert best["gflops"] == pytest.approx(Problem(*r["shape"]).gflops(best["ms"]))
        assert r["input_sets"] > 1  # small shapes rotate their inputs
        assert r["ratios"]["numpy"] > 0
        if CLBLAST is not None or vendor != "clblast":
            ref = next(x for x in r["references"] if x["key"] == vendor)
            assert ref["status"] == "ok" and r["ratios"][vendor] > 0
        skipped = [x for x in r["rungs"] if x["status"] == "unsupported-size"]
        assert all(x["rung"] != 13 for x in skipped)
    odd = data["rows"][1]
    assert odd["best"]["rung"] == 13  # the only default kernel that does 33x65x17
    assert {x["rung"] for x in odd["rungs"] if x["status"] == "unsupported-size"} == {6, 7, 8, 12}

    with cs.open() as f:
        rows = list(csv.DictReader(f))
    assert [(r["m"], r["n"], r["k"]) for r in rows] == [("64", "64", "64"), ("33", "65", "17")]
    for r in rows:
        assert float(r["ratio_numpy"]) > 0 and r["best_rung"] and float(r["best_gflops"]) > 0
        if CLBLAST is not None or vendor != "clblast":
            assert float(r[f"ratio_{vendor}"]) > 0


def test_no_rung_for_the_shape_is_said(backend, device, empty_db):
    """Rungs whose tiles cannot do the shape are skipped by name; the libraries still run."""
    row = bench.bench_shape(backend, device, Problem(33, 65, 17), rungs=[6, 9], repeats=1,
                            warmup=0)
    assert row["status"] == "no-rung" and row["best"] is None and row["ratios"] == {}
    assert [r["status"] for r in row["rungs"]] == ["unsupported-size"] * 2
    assert "M=33 is not a multiple of 128" in row["rungs"][0]["message"]
    assert any(r["key"] == "numpy" and r["gflops"] for r in row["references"])
