"""The journal: every result durable the moment it is known, torn tails dropped, reused as a
cache by the next run of the same tune and moved aside (never lost) to start over, a journal of
another device, driver or size refused by name, a full disk one error with no empty journal
left, and an interrupted run resumed with no result lost or repeated."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clgemm.core.errors import UsageError
from clgemm.core.files import FileWriteError
from clgemm.tuner import journal as journal_module
from clgemm.tuner.journal import Journal, read_journal
from clgemm.tuner.journal import refuse_in_use as check_in_use

HEADER = {"device": "opencl-acme-gpu-1.0", "backend": "opencl", "driver": "1.0",
          "size": [64, 64, 64], "rungs": [3], "clgemm": "0.1.0"}


def _rec(ts: int, wpt: int, gflops: float | None = 1.0) -> dict:
    return {"kind": "search", "rung": 3, "config": {"TS": ts, "WPT": wpt},
            "status": "ok" if gflops else "wrong", "gflops": gflops}


def test_records_durable_and_torn_tail_dropped(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal.open(path, HEADER) as j:
        j.append(_rec(8, 1))
        j.append(_rec(8, 2, float("nan")))  # NaN is not JSON: written as null
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["format"] == "clgemm-tune-journal"
    assert json.loads(lines[2])["gflops"] is None
    with open(path, "a") as f:  # a kill in the middle of a write
        f.write('{"kind": "search", "rung": 3, "config": {"TS"')
    header, records, good = read_journal(path)
    assert header["device"] == HEADER["device"] and len(records) == 2
    with Journal.open(path, HEADER) as j:
        assert len(j.results(3)) == 2
        j.append(_rec(16, 4))
    _, records, _ = read_journal(path)
    assert [r["config"] for r in records if "config" in r] == [
        {"TS": 8, "WPT": 1}, {"TS": 8, "WPT": 2}, {"TS": 16, "WPT": 4}]
    assert any(r.get("kind") == "resume" for r in records)
    assert path.read_text().endswith("\n")


def test_existing_journal_is_a_cache_and_fresh_moves_it_aside(tmp_path):
    """The same tune twice reuses what the first measured; starting over keeps the old
    journal under another name, never loses it."""
    path = tmp_path / "j.jsonl"
    with Journal.open(path, HEADER) as j:
        j.append(_rec(8, 1))
        j.append(_rec(8, 2))
    first = path.read_text()
    with Journal.open(path, HEADER) as j:
        assert j.moved_to is None and j.measurements == 2
        j.append(_rec(8, 4))
    assert path.read_text().startswith(first)
    assert [r["config"]["WPT"] for r in read_journal(path)[1] if "config" in r] == [1, 2, 4]
    whole = path.read_text()
    with Journal.open(path, HEADER, fresh=True) as j:
        assert j.moved_to == tmp_path / "j.jsonl.old1" and j.measurements == 0
        j.append(_rec(16, 1))
    assert (tmp_path / "j.jsonl.old1").read_text() == whole
    assert [r["config"] for r in read_journal(path)[1]] == [{"TS": 16, "WPT": 1}]
    with Journal.open(path, HEADER, fresh=True) as j:  # the first one moved aside stays
        assert j.moved_to == tmp_path / "j.jsonl.old2"
    assert (tmp_path / "j.jsonl.old1").read_text() == whole


@pytest.mark.parametrize("field,value", [
    ("device", "opencl-other-gpu-1.0"), ("driver", "2.0"), ("size", [128, 64, 64]),
    ("backend", "cuda"), ("rungs", [3, 4]),
])
def test_foreign_journal_refused_by_name(tmp_path, field, value):
    path = tmp_path / "j.jsonl"
    with Journal.open(path, HEADER) as j:
        j.append(_rec(8, 1))
    before = path.read_text()
    with pytest.raises(UsageError, match=rf"cannot be reused: its {field} is .*; fresh=True "
                                         rf"moves it aside"):
        Journal.open(path, {**HEADER, field: value})
    assert path.read_text() == before
    with Journal.open(path, {**HEADER, field: value}, fresh=True) as j:
        assert j.measurements == 0
    assert (tmp_path / "j.jsonl.old1").read_text() == before


def test_messages_name_the_callers_choices(tmp_path):
    """From Python a message names the keyword; only the command's names its options."""
    path = tmp_path / "j.jsonl"
    Journal.open(path, HEADER).close()
    with pytest.raises(UsageError) as python:
        Journal.open(path, {**HEADER, "driver": "2.0"})
    assert "fresh=True" in str(python.value) and "--" not in str(python.value)
    with pytest.raises(UsageError) as command:
        Journal.open(path, {**HEADER, "driver": "2.0"}, wording=journal_module.COMMAND)
    assert "--fresh moves it aside" in str(command.value)
    assert "--journal FILE uses another" in str(command.value)
    with Journal.open(path, HEADER):
        with pytest.raises(UsageError) as busy:
            Journal.open(path, HEADER)
        assert "in use by another clgemm tune" in str(busy.value)
        assert "--" not in str(busy.value)
        with pytest.raises(UsageError, match="give --journal FILE to start another"):
            check_in_use(path, journal_module.COMMAND)


def test_not_a_journal_refused(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(UsageError, match="not a clgemm tuning journal"):
        Journal.open(path, HEADER)
    assert path.read_text() == '{"hello": 1}\n'


def _expire(signum, frame):
    raise TimeoutError("still waiting on the journal after 30 s")


def test_fifo_or_folder_at_the_journal_refused_without_waiting(tmp_path):
    """Opening a FIFO to append waits for a reader for ever: it is refused by its type."""
    fifo, folder = tmp_path / "fifo.jsonl", tmp_path / "dir.jsonl"
    os.mkfifo(fifo)
    folder.mkdir()
    old = signal.signal(signal.SIGALRM, _expire)
    signal.alarm(30)
    try:
        for path in (fifo, folder):
            for fresh in (False, True):
                with pytest.raises(UsageError, match=f"journal {path} is not a regular file"):
                    Journal.open(path, HEADER, fresh=fresh)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_journal_in_use_refused_until_closed(tmp_path):
    """Reopening cuts a torn tail; cutting a journal another run still appends to would drop
    the lines it wrote meanwhile, so a journal serves one run at a time."""
    path = tmp_path / "j.jsonl"
    with Journal.open(path, HEADER) as first:
        first.append(_rec(8, 1))
        with pytest.raises(UsageError, match=r"journal .*j\.jsonl is in use by another"):
            Journal.open(path, HEADER)
        with pytest.raises(UsageError, match=r"journal .*j\.jsonl is in use by another"):
            check_in_use(path)
        first.append(_rec(8, 2))
    check_in_use(path)
    with Journal.open(path, HEADER) as again:
        assert len(again.results(3)) == 2


def test_short_write_leaves_no_part_line(tmp_path, monkeypatch):
    """A write cut short (a full disk) is taken back, so the next record does not follow a
    part line that would make the journal unreadable."""
    path = tmp_path / "j.jsonl"
    real_write = os.write
    with Journal.open(path, HEADER) as j:
        j.append(_rec(8, 1))
        monkeypatch.setattr(journal_module.os, "write",
                            lambda fd, data: real_write(fd, data[:len(data) // 2]))
        with pytest.raises(FileWriteError, match="only .* bytes of a record could be written"):
            j.append(_rec(8, 2))
        monkeypatch.setattr(journal_module.os, "write", real_write)
        j.append(_rec(8, 4))
    _, records, _ = read_journal(path)
    assert [r["config"]["WPT"] for r in records] == [1, 4]


def _disk_full(fd, data):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_full_disk_one_error_and_no_empty_journal(tmp_path, monkeypatch):
    """A header that cannot be written leaves no journal (an empty one would stand in the next
    run's way); a record that cannot be written is one FileWriteError naming the file, and what
    was written before stays."""
    path = tmp_path / "j.jsonl"
    monkeypatch.setattr(journal_module.os, "write", _disk_full)
    with pytest.raises(FileWriteError, match=rf"cannot write journal {path}: No space left"):
        Journal.open(path, HEADER)
    assert not path.exists()
    monkeypatch.undo()
    with Journal.open(path, HEADER) as j:
        j.append(_rec(8, 1))
        monkeypatch.setattr(journal_module.os, "write", _disk_full)
        with pytest.raises(FileWriteError, match=rf"cannot write journal {path}: No space"):
            j.append(_rec(8, 2))
        monkeypatch.undo()
    assert [r["config"]["WPT"] for r in read_journal(path)[1] if "config" in r] == [1]
    kept = path.read_text()
    monkeypatch.setattr(journal_module.os, "write", _disk_full)
    with pytest.raises(FileWriteError) as reused:
        Journal.open(path, HEADER)
    assert str(reused.value) == f"cannot write journal {path}: No space left on device"
    monkeypatch.undo()
    assert path.read_text() == kept


def test_a_journal_started_by_a_failed_run_is_removed(tmp_path):
    """A run that fails before its first measurement (its measuring process cannot start)
    leaves nothing behind; a journal it only reused is never removed."""
    path = tmp_path / "j.jsonl"
    with pytest.raises(RuntimeError):
        with Journal.open(path, HEADER):
            raise RuntimeError("the measuring process could not start")
    assert not path.exists()
    with Journal.open(path, HEADER) as j:
        j.append(_rec(8, 1))
    kept = path.read_text()
    with pytest.raises(RuntimeError):
        with Journal.open(path, HEADER):
            raise RuntimeError("the measuring process could not start")
    assert path.read_text().startswith(kept)


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
    # The default first (then the configurations stored for the device, then generation
    # order: which are stored depends on the databases shipped, so only the first is fixed).
    assert (after[0]["config"]["TS"], after[0]["config"]["WPT"]) == (32, 8)
    # The same tune again (no option needed) measures nothing more.
    again = subprocess.run(args, capture_output=True, text=True, timeout=180, env=env)
    assert again.returncode == 0, again.stderr
    assert "its 7 measurement(s) are reused" in again.stderr
    assert len(_search(journal)) == 7
    assert json.loads(db.read_text())["entries"][0]["rung"] == 3


def test_a_resumed_timed_search_gets_only_the_time_left(tmp_path):
    """A search's time counts what earlier runs spent, as its budget counts what they
    measured: the same timed tune again measures nothing, and a stopped one goes on for what
    is left, not for its whole time anew."""
    journal, db = tmp_path / "j.jsonl", tmp_path / "db.json"
    args = [sys.executable, "-m", "clgemm", "tune", "--device", "0", "--rungs", "12",
            "--size", "64", "--time", "2", "--jobs", "1", "--repeats", "1", "--warmup", "0",
            "--confirm", "1", "--journal", str(journal), "--database", str(db),
            # a third of the space, planned in a few seconds, and still far more to measure
            # than 2 s allow
            "--only", "PIPELINE=0", "--only", "WARP_M=0", "--only", "RASTER=0",
            "--only", "TSK=8,16", "--only", "TSM=16,32", "--only", "TSN=16,32"]
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path / "results")}
    first = subprocess.run(args, capture_output=True, text=True, timeout=180, env=env)
    assert first.returncode == 0, first.stderr
    measured = len(_search(journal))
    spent = [r for r in read_journal(journal)[1] if r.get("kind") == "spent"]
    assert measured >= 1 and len(spent) == 1 and spent[0]["seconds"] >= 2
    again = subprocess.run(args, capture_output=True, text=True, timeout=180, env=env)
    assert again.returncode == 0, again.stderr
    assert "(0 now" in again.stderr and "stopped: time, spent by earlier runs" in again.stderr
    assert len(_search(journal)) == measured


def test_spent_seconds_read_from_a_journal_are_checked():
    """Only finite, non-negative numbers of seconds of the rung count; an edited journal's
    anything else counts as nothing."""
    from clgemm.tuner.rung_tune import spent_before
    records = [{"kind": "spent", "rung": 12, "seconds": 1.5},
               {"kind": "spent", "rung": 12, "seconds": 2},
               {"kind": "spent", "rung": 13, "seconds": 100.0},
               *({"kind": "spent", "rung": 12, "seconds": bad}
                 for bad in (-1.0, float("nan"), float("inf"), "9", True, None, [3])),
               {"kind": "search", "rung": 12, "seconds": 50.0}]
    assert spent_before(records, 12) == 3.5
    assert spent_before(records, 13) == 100.0
    assert spent_before([], 12) == 0.0
