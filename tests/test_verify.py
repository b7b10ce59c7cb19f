"""`clgemm verify`: the quick sweep passes end to end, covers what it claims to, catches a planted
bug, and writes failures that --replay runs again."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from clgemm.backends import array_library
from clgemm.core import accuracy
from clgemm.library import gemm as api
from clgemm.library import plan as library_plan
from clgemm.measure import rung_runner, verify
from clgemm.rungs import REGISTRY, get_rung


def clgemm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clgemm", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_verify_quick_passes(tmp_path):
    out = tmp_path / "failures.json"
    r = clgemm("verify", "--quick", "--failures", str(out), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for n in REGISTRY:
        assert f"rung {n} " in r.stdout
    assert "gemm() numpy" in r.stdout and "gemm() pyopencl" in r.stdout
    assert "FAILED" not in r.stdout
    assert json.loads(out.read_text())["cases"] == []


def test_quick_sweep_covers_every_dimension(device):
    planned = verify.plan_cases(device, sorted(REGISTRY), quick=True)
    cases = [c for _, cs in planned for c in cs]
    rungs_run = {c.rung for c in cases if c.path == "buffers"}
    assert rungs_run == set(REGISTRY)
    for path in ("buffers", "numpy", array_library(device.backend)):  # pyopencl, or cupy
        mine = [c for c in cases if c.path == path]
        assert {c.order for c in mine} == {"F", "C"}, path
        assert {(c.trans_a, c.trans_b) for c in mine} == {(False, False), (False, True),
                                                          (True, False), (True, True)}, path
        assert {(c.alpha, c.beta) for c in mine} == {(a, b) for a in verify.ALPHAS
                                                     for b in verify.BETAS}, path
        assert {c.ld_pad > 0 for c in mine} == {False, True}, path
        assert {c.offset > 0 for c in mine} == {False, True}, path
    any_size = [c for c in cases if c.path == "buffers" and REGISTRY[c.rung].any_size]
    assert {1, 7, 64, 129} <= {d for c in any_size for d in (c.m, c.n, c.k)}
    numpy_cases = [c for c in cases if c.path == "numpy"]
    assert {0, 1, 7, 64, 129} <= {d for c in numpy_cases for d in (c.m, c.n, c.k)}
    assert {c.c_given for c in numpy_cases} == {False, True}
    # every rung case is at a size its tiles divide
    for c in cases:
        if c.path == "buffers":
            rung = REGISTRY[c.rung]
            assert rung.size_problem(c.params, c.m, c.n, c.k) is None, c


def test_full_sweep_is_a_superset_in_size(device):
    quick = sum(len(cs) for _, cs in verify.plan_cases(device, [1, 10], quick=True))
    full = sum(len(cs) for _, cs in verify.plan_cases(device, [1, 10], quick=False))
    assert full > 10 * quick


def test_planted_bug_is_caught_and_replayed(device, tmp_path, monkeypatch):
    """Make the epilogue read C even when beta == 0: C holds NaN then, so those cases fail.
    The failures file must reproduce exactly those cases; once the bug is gone they pass."""
    monkeypatch.setattr(library_plan.Plan, "read_c", property(lambda self: True))
    api.clear_caches()  # no program planned before the bug is kept
    planned = verify.plan_cases(device, [10], quick=True, include_api=False)
    groups = verify.run_groups(api.backend_for(device), planned)
    report = verify.Report(device, groups, 0.0)
    failed = report.failures
    assert failed and all(r.case.beta == 0 for r in failed)
    assert any("NaN" in r.message for r in failed)
    assert "FAILED" in verify.summary_table(report)

    path = tmp_path / "failures.json"
    path.write_text(json.dumps(verify.failures_json(report, "test")))
    cases = verify.load_cases(path)
    assert [c.label() for c in cases] == [r.case.label() for r in failed]
    still = verify.replay(device, cases)
    assert len(still.failures) == len(failed)  # the same cases, failing the same way

    monkeypatch.undo()
    r = clgemm("verify", "--device", str(device.index), "--replay", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    # the head line may wrap where the device's name is long: read it as one line
    assert f"{len(cases)} cases, 0 failed" in " ".join(r.stdout.split())


def test_the_stacked_forms_are_swept_and_a_planted_bug_in_one_is_caught(device, tmp_path,
                                                                        monkeypatch):
    """Each kernel with a batched form for stacks is forced through it (the tiled kernel's
    reads each product's B where it lies): its defaults pass; launching one product fewer
    than the stack holds leaves the last one poisoned, the check says so, and the failures
    file replays the same cases."""
    planned = verify.plan_cases(device, [11, 12], quick=True, include_api=False)
    stacked = [(g, cs) for g, cs in planned if g.path == "stack-form"]
    assert {g.rung for g, _ in stacked} == {11, 12}
    assert all(c.batch == 3 for _, cs in stacked for c in cs)
    report = verify.Report(device, verify.run_groups(api.backend_for(device), stacked), 0.0)
    assert not report.failures and "tiled (12) stacked" in verify.summary_table(report)

    original = rung_runner.prepare_stack

    def one_short(backend, rung, params, m, n, k, count, a, b, c):
        return original(backend, rung, params, m, n, k, count - 1, a, b, c)
    monkeypatch.setattr(rung_runner, "prepare_stack", one_short)
    report = verify.Report(device, verify.run_groups(api.backend_for(device), stacked), 0.0)
    assert report.failures and all("unwritten" in r.message for r in report.failures)
    path = tmp_path / "failures.json"
    path.write_text(json.dumps(verify.failures_json(report, "test")))
    cases = verify.load_cases(path)
    assert [c.label() for c in cases] == [r.case.label() for r in report.failures]
    assert len(verify.replay(device, cases).failures) == len(cases)


def test_a_case_keeps_its_seed_whatever_else_the_sweep_holds(device):
    """A case's inputs come from what it is, not from how many cases the sweep planned before
    it: more kernels swept ahead of gemm()'s own rows leave those rows' seeds as they were, so
    a failure found once is found again. Within a group the seeds still differ, and a stack's
    cases still alternate between a B of their own and one B for all."""
    def seeds(rungs):
        return {(g.name, c.label()): c.seed for g, cs in verify.plan_cases(device, rungs, True)
                for c in cs if c.path != "buffers" or c.rung == 11}
    few, more = seeds([11]), seeds([1, 2, 11, 12])
    assert few and all(more[key] == seed for key, seed in few.items())
    planned = verify.plan_cases(device, [11], quick=True)
    for _, cases in planned:
        assert len({c.seed for c in cases}) == len(cases)
    stacks = next(cs for g, cs in planned if g.path == "stacks")
    assert [c.seed % 2 for c in stacks[:4]] == [0, 1, 0, 1]


def test_replay_failure_exits_nonzero(device, tmp_path):
    """A case that cannot run (a size the forced rung's tiles do not divide is padded, but a
    parameter set breaking a constraint is refused) fails, and the exit status says so."""
    bad = verify.Case("buffers", 64, 64, 64, rung=3, params={"TS": 32, "WPT": 3},
                      source="default", seed=1)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": verify.FORMAT, "version": 1,
                                "cases": [bad.__dict__]}))
    r = clgemm("verify", "--device", str(device.index), "--replay", str(path))
    assert r.returncode == 1
    said = " ".join(r.stderr.split())  # notes are wrapped to the terminal's width
    assert "1 of 1 cases failed" in said and "TS % WPT == 0" in said


def _failures_file(cases) -> str:
    return json.dumps({"format": verify.FORMAT, "version": 1, "cases": cases})


GOOD = {"path": "numpy", "m": 7, "n": 7, "k": 7}


@pytest.mark.parametrize("content,message", [
    ("not json", "cannot be read: not valid JSON"),
    (json.dumps({"format": "other"}), "not a file written by"),
    (_failures_file({"a": 1}), "'cases' is not a list"),
    (_failures_file([GOOD, 1]), "case 2 is not a JSON object"),
    (_failures_file([[]]), "case 1 is not a JSON object"),
    (_failures_file([{"path": "numpy", "m": 7}]), "case 1 lacks n, k"),
    (_failures_file([{**GOOD, "m": "7"}]), 'case 1: m must be a non-negative integer, not "7"'),
    (_failures_file([{**GOOD, "k": -1}]), "case 1: k must be a non-negative integer, not -1"),
    (_failures_file([{**GOOD, "seed": "s"}]), "seed must be a non-negative integer"),
    (_failures_file([{**GOOD, "order": "X"}]), 'order must be "F" or "C", not "X"'),
    (_failures_file([{**GOOD, "alpha": "a"}]), 'alpha must be a number, not "a"'),
    (_failures_file([{**GOOD, "trans_a": 1}]), "trans_a must be true or false, not 1"),
    (_failures_file([{**GOOD, "path": "gpu"}]), "path must be one of buffers, numpy"),
    (_failures_file([{**GOOD, "rung": "x", "params": [1]}]), "rung must be a rung number"),
    (_failures_file([{**GOOD, "params": {"TS": "a"}}]), "params must be an object of integer"),
    (_failures_file([{**GOOD, "m": 10**6, "n": 10**6}]), "of host memory"),
])
def test_replay_bad_file(tmp_path, content, message):
    path = tmp_path / "f.json"
    path.write_text(content)
    r = clgemm("verify", "--replay", str(path))
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --replay") and message in lines[0], \
        r.stderr


def test_bad_rungs_option():
    r = clgemm("verify", "--rungs", "15")
    assert r.returncode == 2 and "there is no rung 15" in r.stderr


@pytest.mark.no_shipped_tuning
def test_tuned_configs_skip_entries_of_an_earlier_parameter_set(monkeypatch, device, tmp_path):
    """A database entry measured before a rung gained a parameter may be the nearest to every
    sweep size; the sweep must still find the current entry behind it."""
    from clgemm.configs.database import Entry, load

    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    rung = get_rung(12)   # the tiled kernel
    current = {**rung.defaults(), "VWM": 4, "VWN": 4}
    old = {**rung.defaults(), "PAD": 1}      # a parameter the tiled kernel does not have
    db = load(device)
    db.entries = [Entry(12, [64, 64, 64], device.backend, old, 1.0, 1.0),
                  Entry(12, [4096, 4096, 4096], device.backend, current, 1.0, 1.0)]
    db.save()
    configs = verify._configs(device, [12], quick=True)
    assert (12, current, "tuned") in configs
    assert all(rung.complete(p) == p for _, p, _ in configs)


def test_terms_that_cancel_are_judged_by_their_own_size(device):
    """1 x 1 x 1 with alpha = beta = 3.14 and the seed that makes alpha A B = -5.5750 and
    beta C = 5.5748: their sum, -1.8e-4, is 1e-7 of each term away from any float32 result,
    which is 1e-3 of the sum. The case passes on the device; a result off by twice the
    tolerance of the terms' size still fails."""
    case = verify.Case("buffers", 1, 1, 1, trans_a=True, order="C", alpha=3.14, beta=3.14,
                       ld_pad=3, offset=5, rung=13, params=get_rung(13).defaults(),
                       source="default", seed=29214)
    x = verify._inputs(case)
    product, scaled_c = verify._terms(case, x)
    assert abs(product + scaled_c).max() < 1e-3 < abs(product).max()
    result = verify.run_case(api.backend_for(device), case)
    assert result.ok, result.message
    rounded = (np.float32(product) + np.float32(scaled_c)).astype(np.float32)
    assert verify._judge(case, rounded, x, True).ok
    off = rounded + np.float32(4e-4 * abs(product).max())  # 2e-4 of |product| + |beta C|
    assert not verify._judge(case, off, x, True).ok


def test_magnitude_sets_the_scale_and_must_match():
    ref = np.array([1e-4, 1.0])
    got = ref + np.array([1e-6, 0.0])
    assert accuracy.relative_error(got, ref) == pytest.approx(1e-6)
    assert accuracy.relative_error(got, ref, magnitude=np.array([10.0, 0.0])) == pytest.approx(1e-7)
    with pytest.raises(ValueError, match="magnitude"):
        accuracy.relative_error(got, ref, magnitude=np.ones(3))


def test_a_case_that_ends_the_process_is_named_by_the_next_sweep(tmp_path):
    """A runtime that kills the sweep's process (here the process kills itself as its third
    case starts) leaves that case behind: the next verify of the device names it, and the file
    it names replays it."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    script = ("import os, signal, sys\n"
              "from clgemm.measure import verify\n"
              "run_case, seen = verify.run_case, []\n"
              "def dying(backend, case):\n"
              "    seen.append(case)\n"
              "    if len(seen) == 3:\n"
              "        print('dying at', case.label(), file=sys.stderr, flush=True)\n"
              "        os.kill(os.getpid(), signal.SIGKILL)\n"
              "    return run_case(backend, case)\n"
              "verify.run_case = dying\n"
              "from clgemm.cli import main\n"
              "sys.argv = ['clgemm', 'verify', '--rungs', '1', '--quick']\n"
              "sys.exit(main())\n")
    died = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=120)
    assert died.returncode != 0
    label = died.stderr.split("dying at ", 1)[1].splitlines()[0]
    assert len(list((tmp_path / "verify-running").glob("*.json"))) == 1
    after = subprocess.run([sys.executable, "-m", "clgemm", "verify", "--rungs", "1",
                            "--quick"], capture_output=True, text=True, env=env, timeout=120)
    assert after.returncode == 0, after.stderr
    said = " ".join(after.stderr.split())  # (wrapped to the terminal's width)
    assert f"ended while running {label} [rung 1]" in said
    crashed = list((tmp_path / "verify-crashed").glob("*.json"))
    assert len(crashed) == 1 and not list((tmp_path / "verify-running").glob("*.json"))
    replayed = clgemm("verify", "--replay", str(crashed[0]), timeout=120)
    assert replayed.returncode == 0 and ": 1/1 passed" in replayed.stderr
    again = subprocess.run([sys.executable, "-m", "clgemm", "verify", "--rungs", "1",
                            "--quick"], capture_output=True, text=True, env=env, timeout=120)
    assert "ended while running" not in again.stderr  # named once


def test_cases_left_behind_are_those_of_the_device_and_of_ended_processes(device, tmp_path):
    """A file of a running sweep (this process) and one of another device whose name starts as
    this one's are left where they are; a file of an ended process of this device is named."""
    import dataclasses

    from clgemm.measure.verify_running import RunningCase, left_behind
    other = dataclasses.replace(device, driver_version=f"{device.driver_version}-b")
    case = verify.Case("numpy", 4, 4, 4)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True).stdout.strip()
    for info in (device, other):
        gone = RunningCase(info, tmp_path)
        gone.mark(case)
        gone.path.rename(gone.path.with_name(gone.path.name.replace(
            f"-{os.getpid()}.json", f"-{ended}.json")))
    mine = RunningCase(device, tmp_path)
    mine.mark(case)
    found = left_behind(device, tmp_path)
    assert [p.name for p, _ in found] == [f"{mine.path.name.rsplit('-', 1)[0]}-{ended}.json"]
    assert found[0][1]["m"] == 4 and mine.path.exists()
    assert len(list((tmp_path / "verify-running").glob("*.json"))) == 2
    mine.clear()
    assert not mine.path.exists()
