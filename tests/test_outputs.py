"""Output files are checked before any work starts: a place that cannot be written is refused in
one line with exit status 2, instead of a traceback once the work is done and its results lost."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import threading
import time

import pytest

from clgemm.cli import main
from clgemm.core import files, paths
from clgemm.core.errors import UsageError
from clgemm.core.paths import check_writable, write_output


@pytest.fixture
def blocker(tmp_path):
    """A regular file where a folder would have to be."""
    f = tmp_path / "a-file"
    f.write_text("")
    return f


def test_new_file_in_new_folders_is_accepted_and_written(tmp_path):
    target = tmp_path / "new" / "deeper" / "out.json"
    assert check_writable("--json", target) == target
    assert not (tmp_path / "new").exists()  # the check creates nothing
    write_output(target, "{}\n")
    assert target.read_text() == "{}\n"


def test_folder_file_under_a_file_and_unwritable_places(tmp_path, blocker, monkeypatch):
    with pytest.raises(UsageError, match=r"^--json .*: is a folder, not a file$"):
        check_writable("--json", tmp_path)
    with pytest.raises(UsageError, match=r"cannot be created, .*a-file is a file, not a folder"):
        check_writable("--csv", blocker / "sub" / "x.csv")
    real_access = os.access
    monkeypatch.setattr(paths.os, "access", lambda p, mode: False if str(p).startswith(
        str(tmp_path)) else real_access(p, mode))
    with pytest.raises(UsageError, match=r"^--failures .*a-file: the file is not writable$"):
        check_writable("--failures", blocker)
    with pytest.raises(UsageError, match=r"cannot be created, the folder .* is not writable"):
        check_writable("--journal", tmp_path / "x" / "j.jsonl")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files")
def test_read_only_file_refused(tmp_path):
    f = tmp_path / "ro.json"
    f.write_text("")
    f.chmod(0o444)
    with pytest.raises(UsageError, match="the file is not writable"):
        check_writable("--json", f)


def _one_error_line(capsys, needle: str) -> None:
    out = capsys.readouterr()
    lines = [ln for ln in out.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], out.err


@pytest.mark.parametrize("args, option", [
    (["ladder", "--size", "64", "--rungs", "1", "--repeats", "1", "--json"], "--json"),
    (["bench", "--sizes", "64", "--rungs", "1", "--repeats", "1", "--json"], "--json"),
    (["bench", "--sizes", "64", "--rungs", "1", "--repeats", "1", "--csv"], "--csv"),
    (["verify", "--rungs", "1", "--quick", "--failures"], "--failures"),
    (["tune", "--size", "64", "--rungs", "1", "--budget", "1", "--jobs", "0", "--journal"],
     "--journal"),
    (["tune", "--size", "64", "--rungs", "1", "--budget", "1", "--jobs", "0", "--database"],
     "--database"),
])
def test_every_command_refuses_an_unwritable_output_before_working(args, option, blocker,
                                                                  tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path / "results"))
    target = blocker / "out.file"
    assert main([*args, str(target)]) == 2
    _one_error_line(capsys, f"{option} {target}: cannot be created")
    assert not (tmp_path / "results").exists()  # no journal, no database written


def test_tune_refuses_a_results_folder_it_cannot_write(blocker, capsys, monkeypatch):
    """The default journals and database live under $CLGEMM_RESULTS: checked the same way."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(blocker / "results"))
    assert main(["tune", "--size", "64", "--rungs", "1", "--budget", "1", "--jobs", "0"]) == 2
    _one_error_line(capsys, "cannot be created")


# -- writing: whole or not at all, one line when it fails ----------------------------------------
def test_a_full_device_is_one_error_line(capsys):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    assert main(["show", "5", "--json", "/dev/full"]) == 1
    _one_error_line(capsys, "cannot write --json /dev/full: No space left on device")


def test_a_full_disk_leaves_the_old_file_and_no_part_file(tmp_path, capsys, monkeypatch):
    target = tmp_path / "out.json"
    target.write_text("the old results\n")
    real_write = os.write

    def full(fd: int, data) -> int:
        if fd > 2:  # any file; stdout and stderr still print
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(files.os, "write", full)
    assert main(["show", "5", "--json", str(target)]) == 1
    monkeypatch.undo()
    _one_error_line(capsys, f"cannot write --json {target}: No space left on device")
    assert target.read_text() == "the old results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no temporary left


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/proc"),
                    reason="only root passes the permission check in /proc")
def test_a_folder_that_takes_no_file_is_refused_up_front(capsys):
    """Root may write to /proc by its permissions, yet no file can be made there: found by
    trying, before the work starts rather than after it."""
    with pytest.raises(UsageError, match=r"^--json /proc/x.json: cannot be created in the "
                                         r"folder /proc \("):
        check_writable("--json", "/proc/x.json")
    assert main(["ladder", "--size", "64", "--rungs", "1", "--repeats", "1", "--json",
                 "/proc/x.json"]) == 2
    _one_error_line(capsys, "--json /proc/x.json: cannot be created")


def test_a_file_in_a_folder_that_takes_no_new_file_is_refused(tmp_path, monkeypatch):
    """The file is replaced through a temporary file beside it: its folder must take one."""
    target = tmp_path / "out.json"
    target.write_text("{}")

    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(paths.tempfile, "mkstemp", refuse)
    with pytest.raises(UsageError, match="cannot be replaced, the folder .* takes no new file "
                                         r"\(Read-only file system\)"):
        check_writable("--json", target)


def test_devices_and_fifos_are_written_where_they_are(tmp_path):
    """/dev/null stays a device (a rename would have put a file in its place), a FIFO nobody
    reads is one error line rather than a wait for ever, and one that is read gets the JSON."""
    assert main(["show", "5", "--json", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "clgemm", "show", "5", "--json", str(fifo)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.strip() == (
        f"error: cannot write --json {fifo}: nothing reads from it"), r.stderr
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    try:
        time.sleep(0.2)  # the reader has the FIFO open before the writer looks
        r = subprocess.run([sys.executable, "-m", "clgemm", "show", "5", "--json", str(fifo)],
                           capture_output=True, text=True, timeout=120)
    finally:
        if reader.is_alive():  # the writer failed: let the reader go
            with open(fifo, "w"):
                pass
        reader.join()
    assert r.returncode == 0, r.stderr
    assert json.loads(got[0])["rung"] == 5


def test_dev_stdout_gets_the_json_after_the_source():
    r = subprocess.run([sys.executable, "-m", "clgemm", "show", "5", "--json", "/dev/stdout"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    source, _, data = r.stdout.rpartition("\n{\n")
    assert "__kernel" in source and json.loads("{" + data)["rung"] == 5
