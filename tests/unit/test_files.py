"""clgemm/core/files.py and clgemm/core/locks.py: readers that never hang or overflow, writers that never
leave an empty or half-written file, and locks that two links to one file share."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import threading
import time

import filelock
import pytest

from clgemm.core import files, locks
from clgemm.core.errors import UsageError
from clgemm.core.files import FileWriteError


def test_deeply_nested_json_is_one_clear_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000)
    with pytest.raises(UsageError, match="nested too deeply") as info:
        files.read_json(path, "database")
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_fifo_is_refused_without_waiting(tmp_path):
    path = tmp_path / "x.json"
    os.mkfifo(path)
    box = {}

    def read():
        try:
            files.read_json(path)
        except UsageError as exc:
            box["error"] = str(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "reading a FIFO blocked"
    assert "not a regular file" in box["error"]
    assert not files.is_regular_file(path)


def test_not_utf8_and_folders_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{")
    with pytest.raises(UsageError, match="not UTF-8"):
        files.read_json(bad)
    with pytest.raises(UsageError, match="folder"):
        files.read_json(tmp_path)
    with pytest.raises(UsageError, match="cannot be read"):
        files.read_json(tmp_path / "missing.json")


def test_write_atomic_keeps_the_old_file_when_the_disk_is_full(tmp_path, monkeypatch):
    path = tmp_path / "out.json"
    path.write_text("old")

    def full(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "write", full)
    with pytest.raises(FileWriteError, match="No space left on device") as info:
        files.write_atomic(path, "new" * 1000, "database")
    assert str(path) in str(info.value)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_write_atomic_never_creates_an_empty_file(tmp_path, monkeypatch):
    path = tmp_path / "new.json"
    monkeypatch.setattr(files.os, "fsync",
                        lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O error")))
    with pytest.raises(FileWriteError, match="I/O error"):
        files.write_atomic(path, "text")
    assert list(tmp_path.iterdir()) == []


def test_write_atomic_through_a_link_keeps_the_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    files.write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_loop_of_links_is_refused_and_left_alone(tmp_path):
    loop = tmp_path / "db.json"
    loop.symlink_to(loop)
    with pytest.raises(FileWriteError, match="symbolic links"):
        files.write_atomic(loop, "text")
    assert loop.is_symlink()


def test_a_folder_in_the_way_is_one_line(tmp_path):
    (tmp_path / "x.json").mkdir()
    with pytest.raises(FileWriteError, match="Is a directory"):
        files.write_atomic(tmp_path / "x.json", "text")


def test_two_links_share_one_lock(tmp_path):
    real = tmp_path / "db.json"
    real.write_text("{}")
    (tmp_path / "a.json").symlink_to(real)
    (tmp_path / "b.json").symlink_to(real)
    assert locks.lock_path(tmp_path / "a.json") == locks.lock_path(tmp_path / "b.json")
    held = locks.try_hold(tmp_path / "a.json")
    assert held is not None
    try:
        assert locks.try_hold(tmp_path / "b.json") is None
    finally:
        held.release()
    again = locks.try_hold(tmp_path / "b.json")
    assert again is not None
    again.release()


def test_locks_are_filelock_locks(tmp_path):
    """The well-kept library, so that locking also works where fcntl does not exist."""
    held = locks.try_hold(tmp_path / "x.json")
    assert isinstance(held, filelock.BaseFileLock)
    held.release()


def test_a_folder_at_the_lock_is_one_line(tmp_path):
    (tmp_path / "db.json.lock").mkdir()
    with pytest.raises(FileWriteError, match="is a folder"):
        with locks.exclusive(tmp_path / "db.json"):
            pass


def _hold_for(path: str, seconds: float, ready) -> None:
    with locks.exclusive(path):
        ready.set()
        time.sleep(seconds)


def test_exclusive_waits_for_another_process(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    p = ctx.Process(target=_hold_for, args=(str(tmp_path / "db.json"), 1.0, ready))
    p.start()
    try:
        assert ready.wait(60)
        t0 = time.monotonic()
        with locks.exclusive(tmp_path / "db.json"):
            waited = time.monotonic() - t0
    finally:
        p.join(60)
    assert waited > 0.3


def test_files_of_a_newer_format_are_refused(tmp_path):
    """A newer clgemm's database or journal is refused by name: read, its entries could mean
    something else; saved over, it would go back to the older format."""
    from clgemm.configs.database import FORMAT as DB_FORMAT
    from clgemm.configs.database import VERSION as DB_VERSION
    from clgemm.configs.database import read_any
    from clgemm.tuner.journal import FORMAT as JOURNAL_FORMAT
    from clgemm.tuner.journal import VERSION, read_journal

    db = tmp_path / "db.json"
    db.write_text(json.dumps({"format": DB_FORMAT, "version": DB_VERSION + 1, "device": "x",
                              "backend": "opencl", "entries": []}))
    with pytest.raises(UsageError, match=f"format version {DB_VERSION + 1}"):
        read_any(db)
    journal = tmp_path / "j.jsonl"
    journal.write_text(json.dumps({"format": JOURNAL_FORMAT, "version": VERSION + 1}) + "\n")
    with pytest.raises(UsageError, match="newer clgemm"):
        read_journal(journal)
