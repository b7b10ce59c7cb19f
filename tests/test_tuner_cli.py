"""`clgemm tune` as a user runs it: the funnel before anything is measured, every mistake
refused in one line with exit status 2 before any kernel is built, the same tune twice reusing
its journal, a full disk one line, and Ctrl-C one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from clgemm.core.locks import try_hold
from clgemm.tuner.journal import read_journal


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


def _plan_lines(*args: str, env: dict, stderr: Path) -> list[str]:
    """What `clgemm tune ARGS` prints up to its plan's total, the process then stopped with
    everything it started (its stderr into the file `stderr`): the funnels after the plan take
    a minute and a half on two cores, and `test_dry_run_prints_funnels_only` covers them."""
    with open(stderr, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "clgemm", "tune", *args], text=True,
                                stdout=subprocess.PIPE, stderr=err,
                                env={**env, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
    timer = threading.Timer(120, os.killpg, (proc.pid, signal.SIGKILL))
    timer.start()
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "minutes in all" in line:
                break
    finally:
        timer.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return lines


def test_plain_tune_prints_its_bounded_plan(tmp_path):
    """No budget, time or --exhaustive: the plan of the whole ladder and gemm()'s shapes, with
    seconds per step and a total inside the limit, before anything runs."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    errors = tmp_path.parent / f"{tmp_path.name}-stderr"
    out = "".join(_plan_lines("--device", "0", "--dry-run", env=env, stderr=errors))
    assert "plan (no --budget, --time or --exhaustive given)" in out
    assert "minutes in all" in out, (out, errors.read_text())
    total = float(out.split("about ")[1].split(" minutes")[0])
    assert 0 < total <= 15
    table = out.split("plan (no --budget, --time or --exhaustive given):\n")[1]
    # a step's row starts with its rung; a name too long for the terminal goes on below it
    steps = [line.split() for line in table.splitlines()[2:-1] if line[:1].isdigit()]
    assert {int(step[0]) for step in steps} == set(range(1, 15))  # the ladder and gemm()'s
    assert "direct GEMM" in table
    assert sum(int(step[-1]) for step in steps) / 60 <= total  # starts come on top
    assert "Traceback" not in errors.read_text()
    assert not any(tmp_path.iterdir())


def test_exhaustive_prints_its_time_first(tmp_path):
    # nothing stored is read, so the count is the space's alone, whatever this device's tuning
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path), "CLGEMM_SHIPPED_TUNING": "0"}
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
    (("--fresh", "--resume"), "--fresh starts the journals over and --resume continues them"),
])
def test_bad_input_one_line_exit_2(tmp_path, args, needle):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    r = tune("--size", "64", "--rungs", "1", *args, env=env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], r.stderr


def test_foreign_journal_refused_before_measuring(tmp_path):
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path / "results")}
    journal = tmp_path / "j.jsonl"
    header = {"format": "clgemm-tune-journal", "version": 1, "device": "opencl-acme-gpu-1.0",
              "backend": "opencl", "driver": "1.0", "size": [64, 64, 64], "rungs": [1]}
    journal.write_text(json.dumps(header) + "\n")
    base = ("--device", "0", "--rungs", "1", "--size", "64", "--journal", str(journal))
    for extra in ((), ("--resume",)):
        r = tune(*base, *extra, env=env)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith(f"error: journal {journal} cannot be reused: its driver is "
                                   f"'1.0', this run's is ")
        assert "; --fresh moves it aside and starts a new one" in r.stderr
        assert len(r.stderr.splitlines()) == 1, r.stderr
    assert journal.read_text() == json.dumps(header) + "\n"  # untouched
    assert not (tmp_path / "results").exists()


def _measured(journal: Path) -> list[dict]:
    return [r for r in read_journal(journal)[1] if "config" in r and r.get("kind") == "search"]


def test_the_same_tune_twice_reuses_its_journal(tmp_path):
    """A journal is a cache: the second identical run measures nothing again and says how much
    it reused; --fresh moves the journal aside (saying where) and measures anew."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    args = ("--device", "0", "--rungs", "3", "--size", "48", "--budget", "2", "--jobs", "0",
            "--repeats", "1", "--warmup", "0", "--confirm", "0")
    first = tune(*args, env=env)
    assert first.returncode == 0, first.stderr
    journal = next(tmp_path.glob("journals/*/rung3-48x48x48.jsonl"))
    measured = _measured(journal)
    assert len(measured) == 2

    second = tune(*args, env=env)
    assert second.returncode == 0, second.stderr
    assert (f"journal {journal}: its 2 measurement(s) are reused and new ones appended "
            f"(--fresh moves it aside and starts a new one)") in " ".join(second.stderr.split())
    assert _measured(journal) == measured  # nothing measured twice
    assert "rung 3: 2 measured (0 now, 0 failed)" in second.stderr

    fresh = tune(*args, "--fresh", env=env)
    assert fresh.returncode == 0, fresh.stderr
    aside = journal.with_name(journal.name + ".old1")
    assert f"moved aside to {aside}" in " ".join(fresh.stderr.split())
    assert _measured(aside) == measured
    assert len(_measured(journal)) == 2 and "rung 3: 2 measured (2 now" in fresh.stderr


def test_journal_in_use_refused_in_one_line(tmp_path):
    """Another run holding the journal: refused before anything is measured, saying so (not
    told to add an option that would fail the same way)."""
    journal = tmp_path / "j.jsonl"
    header = {"format": "clgemm-tune-journal", "version": 2, "device": "d", "backend": "opencl",
              "driver": "1", "size": [48, 48, 48], "rungs": [1]}
    journal.write_text(json.dumps(header) + "\n")
    held = try_hold(journal)
    assert held is not None
    try:
        r = tune("--device", "0", "--rungs", "1", "--size", "48", "--budget", "1", "--journal",
                 str(journal), env={**os.environ, "CLGEMM_RESULTS": str(tmp_path)})
    finally:
        held.release()
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [f"error: journal {journal} is in use by another clgemm "
                                     f"tune; wait for it to finish, or give --journal FILE to "
                                     f"start another"]


#: `clgemm tune` with the journal's writes failing as on a full disk
FULL_DISK = """
import errno, os, sys
from clgemm.cli import main
from clgemm.tuner import journal

class FullDisk:
    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def write(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

journal.os = FullDisk()
sys.exit(main(sys.argv[1:]))
"""


def test_full_disk_one_line_and_no_empty_journal(tmp_path):
    journal = tmp_path / "j.jsonl"
    r = subprocess.run([sys.executable, "-c", FULL_DISK, "tune", "--device", "0", "--rungs", "1",
                        "--size", "48", "--budget", "1", "--journal", str(journal)],
                       capture_output=True, text=True, timeout=300,
                       env={**os.environ, "CLGEMM_RESULTS": str(tmp_path)})
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines() == [f"error: cannot write journal {journal}: No space left on "
                                     f"device"]
    assert not journal.exists()


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


def _started(journal: Path) -> bool:
    """The journal's header is written: the command is past its imports and checks, and its
    children are about to start."""
    return journal.exists() and b"\n" in journal.read_bytes()


def _measuring(journal: Path) -> bool:
    """The worker has measured one configuration and is on the next."""
    return _started(journal) and len(journal.read_bytes().splitlines()) >= 2


#: when to press Ctrl-C: a state the run must have reached, then how long to wait after it
MOMENTS = {
    "children-starting": (lambda journal, pid: _started(journal), 0.0),
    "builders-busy": (lambda journal, pid: _started(journal) and bool(_children(pid)), 0.5),
    "worker-measuring": (lambda journal, pid: _measuring(journal), 0.0),
}


def _wait_until(ready, proc: subprocess.Popen, within_s: float = 120.0) -> None:
    deadline = time.monotonic() + within_s
    while not ready():
        assert proc.poll() is None, "the tune ended before the moment to interrupt it"
        assert time.monotonic() < deadline, f"the moment to interrupt never came ({within_s} s)"
        time.sleep(0.02)


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_ctrl_c_prints_one_line_and_keeps_the_journal(tmp_path, moment):
    """Ctrl-C reaches the terminal's whole foreground process group. Only the tuner may answer:
    one 'interrupted' line, exit status 130, no child's traceback or compiler message, the
    journal's lines whole, and no child left running. The moment is a state the run reached
    (read from its journal and its children), never a fixed time: under load the imports
    alone can take longer than any fixed wait."""
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path)}
    journal = tmp_path / "j.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "clgemm", "tune", "--device", "0", "--rungs",
                             "5", "--size", "64", "--budget", "500", "--jobs", "2", "--journal",
                             str(journal)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    ready, then_s = MOMENTS[moment]
    try:
        _wait_until(lambda: ready(journal, proc.pid), proc)
        time.sleep(then_s)
        children = _children(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted", err
    assert [ln for ln in err.splitlines() if "rror" in ln or "interrupted" in ln] == \
        ["interrupted"], err
    assert _gone(children, 10), children
    if journal.exists():
        for line in journal.read_text().splitlines():
            json.loads(line)
