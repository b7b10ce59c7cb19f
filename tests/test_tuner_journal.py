"""The journal: every result durable the moment it is known, torn tails dropped, a journal of
another device, driver or size refused by name, and an interrupted run resumed with no result
lost or repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clgemm.errors import ClgemmError, UsageError
from clgemm.tuner import journal as journal_module
from clgemm.tuner.journal import Journal, read_journal

HEADER = {"device": "opencl-acme-gpu-1.0", "backend": "opencl", "driver": "1.0",
          "size": [64, 64, 64], "rungs": [3], "clgemm": "0.1.0"}


def _rec(ts: int, wpt: int, gflops: float | None = 1.0) -> dict:
    return {"kind": "search", "rung": 3, "config": {"TS": ts, "WPT": wpt},
            "status": "ok" if gflops else "wrong", "gflops": gflops}


def test_records_durable_and_torn_tail_dropped(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal.open(path, HEADER, resume=False) as j:
        j.append(_rec(8, 1))
        j.append(_rec(8, 2, float("nan")))  # NaN is not JSON: written as null
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["format"] == "clgemm-tune-journal"
    assert json.loads(lines[2])["gflops"] is None
    with open(path, "a") as f:  # a kill in the middle of a write
        f.write('{"kind": "search", "rung": 3, "config": {"TS"')
    header, records, good = read_journal(path)
    assert header["device"] == HEADER["device"] and len(records) == 2
    with Journal.open(path, HEADER, resume=True) as j:
        assert len(j.results(3)) == 2
        j.append(_rec(16, 4))
    _, records, _ = read_journal(path)
    assert [r["config"] for r in records if "config" in r] == [
        {"TS": 8, "WPT": 1}, {"TS": 8, "WPT": 2}, {"TS": 16, "WPT": 4}]
    assert any(r.get("kind") == "resume" for r in records)
    assert path.read_text().endswith("\n")


def test_exists_without_resume_refused(tmp_path):
    path = tmp_path / "j.jsonl"
    Journal.open(path, HEADER, resume=False).close()
    with pytest.raises(UsageError, match="already exists: add --resume"):
        Journal.open(path, HEADER, resume=False)


@pytest.mark.parametrize("field,value", [
    ("device", "opencl-other-gpu-1.0"), ("driver", "2.0"), ("size", [128, 64, 64]),
    ("backend", "cuda"), ("rungs", [3, 4]),
])
def test_foreign_journal_refused_by_name(tmp_path, field, value):
    path = tmp_path / "j.jsonl"
    Journal.open(path, HEADER, resume=False).close()
    with pytest.raises(UsageError, match=rf"cannot resume .*: its {field} is "):
        Journal.open(path, {**HEADER, field: value}, resume=True)


def test_not_a_journal_refused(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(UsageError, match="not a clgemm tuning journal"):
        Journal.open(path, HEADER, resume=True)


def test_journal_in_use_refused_until_closed(tmp_path):
    """A resume cuts a torn tail; cutting a journal another run still appends to would drop
    the lines it wrote meanwhile, so a journal serves one run at a time."""
    path = tmp_path / "j.jsonl"
    with Journal.open(path, HEADER, resume=False) as first:
        first.append(_rec(8, 1))
        with pytest.raises(UsageError, match=r"journal .*j\.jsonl is in use by another"):
            Journal.open(path, HEADER, resume=True)
        first.append(_rec(8, 2))
    with Journal.open(path, HEADER, resume=True) as again:
        assert len(again.results(3)) == 2


def test_short_write_leaves_no_part_line(tmp_path, monkeypatch):
    """A write cut short (a full disk) is taken back, so the next record does not follow a
    part line that would make the journal unreadable."""
    path = tmp_path / "j.jsonl"
    real_write = os.write
    with Journal.open(path, HEADER, resume=False) as j:
        j.append(_rec(8, 1))
        monkeypatch.setattr(journal_module.os, "write",
                            lambda fd, data: real_write(fd, data[:len(data) // 2]))
        with pytest.raises(ClgemmError, match="only .* bytes of a record could be written"):
            j.append(_rec(8, 2))
        monkeypatch.setattr(journal_module.os, "write", real_write)
        j.append(_rec(8, 4))
    _, records, _ = read_journal(path)
    assert [r["config"]["WPT"] for r in records] == [1, 4]


# -- interrupted run -----------------------------------------------------------------------

def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return found


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _search(path: Path) -> list[dict]:
    _, records, _ = read_journal(path)
    return [r for r in records if "config" in r and r.get("kind", "search") == "search"]


def test_killed_run_resumes_without_loss_or_repeat(tmp_path):
    journal, db = tmp_path / "j.jsonl", tmp_path / "db.json"
    args = [sys.executable, "-m", "clgemm", "tune", "--device", "0", "--rungs", "3",
            "--size", "64", "--strategy", "exhaustive", "--budget", "7", "--jobs", "1",
            "--repeats", "1", "--warmup", "0", "--confirm", "1", "--journal", str(journal),
            "--database", str(db)]
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path / "results")}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if journal.exists() and len(_search(journal)) >= 3:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        children = _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    before = _search(journal)
    assert 3 <= len(before) < 7, "the run must be cut short for this test to mean anything"
    assert children, "the tuner should have had a worker and a pre-builder"
    time.sleep(1.0)
    assert all(_gone(c) for c in children), "children outlived their killed parent"

    done = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=180,
                          env=env)
    assert done.returncode == 0, done.stderr
    after = _search(journal)
    configs = [tuple(sorted(r["config"].items())) for r in after]
    assert len(configs) == 7 and len(set(configs)) == 7  # all done, none twice
    assert after[:len(before)] == before  # nothing measured before the kill was lost
    # The default first, then generation order.
    expected = [(32, 8), (8, 1), (8, 2), (8, 4), (8, 8), (16, 1), (16, 2)]
    assert [(r["config"]["TS"], r["config"]["WPT"]) for r in after] == expected
    # Resuming a finished journal measures nothing more.
    again = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=180,
                           env=env)
    assert again.returncode == 0, again.stderr
    assert len(_search(journal)) == 7
    assert json.loads(db.read_text())["entries"][0]["rung"] == 3
