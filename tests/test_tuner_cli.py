"""`clgemm tune` as a user runs it: the funnel before anything is measured, and every mistake
refused in one line with exit status 2 before any kernel is built."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest


def tune(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clgemm", "tune", *args], capture_output=True,
                          text=True, timeout=300, env=env)


def test_dry_run_prints_funnels_only(tmp_path):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = tune("--device", "0", "--rungs", "1,3", "--size", "64", "--budget", "5", "--dry-run",
             env=env)
    assert r.returncode == 0, r.stderr
    assert "rung 1 (naive) at 64x64x64: pruning funnel, then exhaustive" in r.stdout
    assert "rung 3 (more work per work-item) at 64x64x64: pruning funnel, then annealing" in r.stdout
    assert "TS % WPT == 0" in r.stdout and "to measure" in r.stdout
    assert not any(tmp_path.iterdir())  # nothing measured, nothing written


def test_plain_tune_prints_its_bounded_plan(tmp_path):
    """No budget, time or --exhaustive: the plan of the whole ladder and gemm()'s shapes, with
    seconds per step and a total inside the limit, before anything runs."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = tune("--device", "0", "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    assert "plan (no --budget, --time or --exhaustive given)" in r.stdout
    total = float(r.stdout.split("about ")[1].split(" minutes")[0])
    assert 0 < total <= 15
    for rung in range(1, 11):
        assert f"rung {rung} (" in r.stdout
    assert "rung 11 (direct GEMM)" in r.stdout
    assert not any(tmp_path.iterdir())


def test_exhaustive_prints_its_time_first(tmp_path):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = tune("--device", "0", "--rungs", "3", "--size", "64", "--exhaustive", "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    assert "--exhaustive: 14 configurations, about" in r.stdout
    r = tune("--device", "0", "--rungs", "3", "--size", "64", "--exhaustive", "--time", "5",
             env=env)
    assert r.returncode == 2 and "not several" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (("--budget", "0"), "--budget 0: must be positive"),
    (("--budget", "5", "--time", "10"), "not several"),
    (("--strategy", "hillclimb"), "--strategy 'hillclimb': unknown"),
    (("--rungs", "1-99"), "there is no rung"),
    (("--size", "0"), "must be a positive integer"),
    (("--jobs", "-1"), "--jobs -1: must be >= 0"),
    (("--device", "no-such-gpu"), "no device name contains it"),
    (("--only", "VWM=4"), "none of the chosen rungs has a parameter VWM"),
    (("--only", "TS=8,x"), "write NAME=V1,V2,... with non-negative integers"),
    (("--size", "200000"), "A has 40000000000 elements, more than the kernels' 32-bit indexing"),
    (("--time", "nan"), "--time nan: must be a finite number"),
    (("--time", "inf"), "--time inf: must be a finite number"),
    (("--time", "-1"), "--time -1: must be positive"),
    (("--time", "0"), "--time 0: must be positive"),
    (("--launch-timeout", "nan"), "--launch-timeout nan: must be a finite number"),
    (("--launch-timeout", "0"), "--launch-timeout 0: must be positive"),
    (("--build-timeout", "nan"), "--build-timeout nan: must be a finite number"),
    (("--build-timeout", "-inf"), "--build-timeout -inf: must be a finite number"),
])
def test_bad_input_one_line_exit_2(tmp_path, args, needle):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = tune("--size", "64", "--rungs", "1", *args, env=env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], r.stderr


def test_existing_or_foreign_journal_refused_before_measuring(tmp_path):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path / "results")}
    journal = tmp_path / "j.jsonl"
    header = {"format": "clgemm-tune-journal", "version": 1, "device": "opencl-acme-gpu-1.0",
              "backend": "opencl", "driver": "1.0", "size": [64, 64, 64], "rungs": [1]}
    journal.write_text(json.dumps(header) + "\n")
    base = ("--device", "0", "--rungs", "1", "--size", "64", "--journal", str(journal))
    r = tune(*base, env=env)
    assert r.returncode == 2 and "already exists: add --resume" in r.stderr
    r = tune(*base, "--resume", env=env)
    assert r.returncode == 2 and f"cannot resume {journal}: its driver is '1.0'" in r.stderr
    assert journal.read_text() == json.dumps(header) + "\n"  # untouched
    assert not (tmp_path / "results").exists()


def test_only_limits_the_candidates(tmp_path):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = tune("--device", "0", "--rungs", "3", "--size", "64", "--only", "WPT=2,4", "--dry-run",
             env=env)
    assert r.returncode == 0, r.stderr
    assert "candidates limited by --only: WPT=2,4" in r.stdout
    generated = next(ln for ln in r.stdout.splitlines() if ln.startswith("generated"))
    assert generated.split()[-1] == "8"    # TS in (8, 16, 32, 64) x WPT in (2, 4)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _gone(pids: list[int], within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{p}") for p in pids):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("wait_s", [0.8, 1.5, 4.0],
                         ids=["children-starting", "builders-busy", "worker-measuring"])
def test_ctrl_c_prints_one_line_and_keeps_the_journal(tmp_path, wait_s):
    """Ctrl-C reaches the terminal's whole foreground process group. Only the tuner may answer:
    one 'interrupted' line, exit status 130, no child's traceback or compiler message, the
    journal's lines whole, and no child left running."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    journal = tmp_path / "j.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "clgemm", "tune", "--device", "0", "--rungs",
                             "5", "--size", "64", "--budget", "500", "--jobs", "2", "--journal",
                             str(journal)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    time.sleep(wait_s)
    children = _children(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted", err
    assert [ln for ln in err.splitlines() if "rror" in ln or "interrupted" in ln] == \
        ["interrupted"], err
    assert _gone(children, 10), children
    if journal.exists():
        for line in journal.read_text().splitlines():
            json.loads(line)
