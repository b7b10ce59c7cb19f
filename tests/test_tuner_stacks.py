"""Tuning for a stack of products (BATCHxMxNxK): the direct kernel's batched form measured as
gemm() launches a stack, every product checked against float64, the winner stored in a slot of
its own that only stacks look up."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from layouts import rand

import clgemm
from clgemm.backends import open_backend
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem, parse_sizes
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.library import gemm as api
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import reads_b_itself
from clgemm.tuner.settings import problems


def test_a_stack_is_four_numbers_where_stacks_are_taken():
    assert parse_sizes("1000x64x64x64,96", stacks=True) == [Problem(64, 64, 64, 1000),
                                                              Problem(96, 96, 96)]
    with pytest.raises(UsageError, match="is not S or MxNxK"):
        parse_sizes("1000x64x64x64")  # bench's sizes: no stacks
    with pytest.raises(UsageError, match="below 1"):
        parse_sizes("0x64x64x64", stacks=True)
    with pytest.raises(UsageError, match="batch"):
        Problem(4, 4, 4, batch=0)
    stack = Problem(32, 48, 16, batch=7)
    assert stack.label == "7x32x48x16" and Problem.of(stack.dims()) == stack
    assert Problem.of(Problem(5, 6, 7).dims()) == Problem(5, 6, 7)
    assert stack.flops == 7 * 2 * 32 * 48 * 16
    assert problems([(7, 32, 48, 16), 8]) == (stack, Problem(8, 8, 8))


@pytest.fixture(scope="module")
def backend(device):
    return open_backend(device)


def test_every_product_of_a_stack_is_checked(backend):
    """The stack's products come out right one by one; a batched form whose C stride is
    wrong (every product written over the first) leaves the others unwritten, and the check
    says so."""
    ws = Workspace(backend, Problem(24, 40, 16, batch=5), seed=3)
    want = np.stack([ws.a[z].astype(np.float64) @ ws.b[z] for z in range(5)])
    assert np.allclose(ws.ref, want)
    params = {"TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 4, "WPTN": 4, "PAD": 1}
    good = run_rung(backend, ws, DIRECT, params, repeats=1, warmup=0)
    assert good.ok and good.rel_error < 1e-5, good.message
    assert np.allclose(ws.result(), want, rtol=1e-4, atol=1e-4)
    assert good.gflops == pytest.approx(Problem(24, 40, 16, 5).flops / good.ms / 1e6)

    def one_c(m, n, k, count, a, b, c):
        return DIRECT.stack_args(m, n, k, count, a, b, c)[:-1] + [0]
    broken = dataclasses.replace(DIRECT, stack_args=one_c)
    bad = run_rung(backend, ws, broken, params, repeats=1, warmup=0)
    assert bad.status == "wrong" and "unwritten" in bad.message


def tune(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clgemm", "tune", *args], capture_output=True,
                          text=True, timeout=300, env=env)


def test_a_stack_tune_stores_a_slot_of_its_own(device, tmp_path, monkeypatch):
    """`--shapes 4x32x32x32` tunes the kernels with a batched form (direct and tiled) on a
    stack: each journal is named for the stack and says its batch, and each entry says it too;
    the tiled kernel is measured only in its form that reads each product's B as it lies, and
    gemm() on such a stack then runs that one launch; a kernel without a batched form is
    refused in one line."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    # the tiled kernel's tiles narrowed to those of a 32 x 32 product, so that its space takes
    # seconds to enumerate, not half a minute; the forms that read B as it lies stay in it
    r = tune("--device", str(device.index), "--shapes", "4x32x32x32", "--budget", "2",
             "--jobs", "0", "--only", "TSM=16,32", "--only", "TSN=16,32",
             "--only", "WPTM=1,2,4", "--only", "WPTN=1,2,4",
             "--repeats", "1", "--warmup", "0", "--confirm", "0", env=env)
    assert r.returncode == 0, r.stderr
    for rung in (11, 12):
        journal = next(tmp_path.glob(f"journals/*/rung{rung}-4x32x32x32.jsonl"))
        header = json.loads(journal.read_text().splitlines()[0])
        assert header["size"] == [32, 32, 32] and header["batch"] == 4
    [db] = tmp_path.glob("*.json")
    entries = json.loads(db.read_text())["entries"]
    assert sorted((e["rung"], e["shape"], e.get("batch")) for e in entries) == [
        (11, [32, 32, 32], 4), (12, [32, 32, 32], 4)]
    [tiled] = [e for e in entries if e["rung"] == 12]
    assert reads_b_itself(tiled["params"])
    refused = tune("--device", str(device.index), "--shapes", "4x32x32x32", "--rungs", "6",
                   "--budget",
                   "2", "--database", str(db), env=env)
    assert refused.returncode == 2
    assert "a stack of products is tuned on direct, tiled only" in refused.stderr
    assert "Traceback" not in refused.stderr

    # gemm() on the stack: the direct kernel's stack entry is made slower than the tiled one's,
    # so the tiled kernel's runs, one launch, every product right into a poisoned C
    for e in entries:
        e["gflops"] = 1.0 if e["rung"] == 11 else 100.0
    db.write_text(json.dumps({**json.loads(db.read_text()), "entries": entries}))
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    api.clear_caches()
    try:
        be = open_backend(device)
        rng = np.random.default_rng(5)
        a, b = rand(rng, (4, 32, 32)), rand(rng, (4, 32, 32))
        c = np.full((4, 32, 32), np.nan, np.float32)
        with be.observe() as log:
            clgemm.gemm(a, b, c, backend=be)
        assert [name for name, _ in log.times()] == ["gemm_tiled"]
        assert np.allclose(c, np.einsum("zmk,zkn->zmn", a.astype(np.float64), b),
                           rtol=1e-4, atol=1e-4)
    finally:
        api.clear_caches()
