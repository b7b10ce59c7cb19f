"""Output files are checked before any work starts: a place that cannot be written is refused in
one line with exit status 2, instead of a traceback once the work is done and its results lost."""

from __future__ import annotations

import os

import pytest

from clgemm import paths
from clgemm.cli import main
from clgemm.errors import UsageError
from clgemm.paths import check_writable, write_output


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
