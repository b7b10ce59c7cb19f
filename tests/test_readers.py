"""Every file clgemm reads that a user names or that lies in a results folder: JSON nested deeper
than Python's parser can follow is one clear error naming the file, and a FIFO named like a
result is refused (or, in a folder scan, passed over) without waiting on it. Each case runs
under a time limit, so a reader that blocks fails the test instead of hanging the suite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from clgemm.core.errors import UsageError
from clgemm.course import calls, committed, data, plots
from clgemm.tuner.replay import load_replay

DEEP = "[" * 200_000
LIMIT_S = 60


def _deep(path: Path) -> Path:
    path.write_text(DEEP)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


MAKERS = {"deep": _deep, "fifo": _fifo}


@contextmanager
def _within(seconds: int) -> Iterator[None]:
    """Fail a call that does not return within `seconds` (a read blocked on a FIFO)."""
    def expire(signum, frame):
        raise TimeoutError(f"still reading after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# -- the commands: one error line, exit status 2 ------------------------------------------------
#: each reader: the command line around the file (FILE), and the file's name
COMMANDS = {
    "tune --database": (["tune", "--device", "0", "--rungs", "1", "--size", "32", "--budget",
                         "1", "--database", "FILE"], "db.json"),
    "tune --journal": (["tune", "--device", "0", "--rungs", "1", "--size", "32", "--budget",
                        "1", "--journal", "FILE"], "j.jsonl"),
    "tune --resume": (["tune", "--device", "0", "--rungs", "1", "--size", "32", "--budget",
                       "1", "--resume", "--journal", "FILE"], "j.jsonl"),
    "tune --compare-strategies": (["tune", "--compare-strategies", "FILE"], "j.jsonl"),
    "verify --replay": (["verify", "--device", "0", "--replay", "FILE"], "failures.json"),
    "model --device-record": (["model", "--device-record", "FILE"], "ladder.json"),
    "bench --clblast-params": (["bench", "--device", "0", "--call", "--sizes", "32",
                                "--clblast-params", "FILE"], "clblast.json"),
}


@pytest.mark.parametrize("kind", list(MAKERS))
@pytest.mark.parametrize("reader", list(COMMANDS))
def test_command_refuses_in_one_line(tmp_path, reader, kind):
    args, name = COMMANDS[reader]
    path = MAKERS[kind](tmp_path / name)
    r = subprocess.run([sys.executable, "-m", "clgemm",
                        *[str(path) if a == "FILE" else a for a in args]],
                       capture_output=True, text=True, timeout=LIMIT_S,
                       env={**os.environ, "CLGEMM_RESULTS": str(tmp_path / "results")})
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and str(path) in lines[0], r.stderr
    why = "nested too deeply" if kind == "deep" else "not a regular file"
    assert why in lines[0], lines[0]


# -- the scans of results folders: passed over, or one error naming the file --------------------
def _results(tmp_path: Path, kind: str) -> Path:
    """A results folder with a good ladder file and, beside it, a bad file under each name the
    scans read: a JSON result, a call bench, a journal, the plots' manifest."""
    root = tmp_path / "results"
    (root / "journals" / "dev").mkdir(parents=True)
    (root / "plots").mkdir()
    device = {"key": "dev", "name": "dev", "backend": "opencl", "type": "CPU"}
    (root / "ladder-good.json").write_text(json.dumps(
        {"device": device, "size": [64, 64, 64],
         "rows": [{"rung": 1, "status": "ok", "gflops": 1.0, "params": {"TS": 16}}]}))
    for name in ("bad.json", "bench-call-bad.json", "journals/dev/rung1-64x64x64.jsonl",
                 f"plots/{plots.MANIFEST}"):
        MAKERS[kind](root / name)
    return root


@pytest.mark.parametrize("kind", list(MAKERS))
def test_scans_pass_over_what_they_cannot_read(tmp_path, kind):
    root = _results(tmp_path, kind)
    with _within(LIMIT_S):
        assert set(committed.device_records(root)) == {"dev"}
        assert [(m.kind, m.rung) for m in committed.measurements(root)] == [("ladder", 1)]
        assert calls.call_runs(root) == []
        assert plots.read_manifest(root / "plots") == {}


def test_course_data_names_a_deep_file_and_passes_over_a_fifo(tmp_path):
    """The course is built from committed results, so a result that cannot be parsed is an
    error to fix (named), while something that is not a file at all is not a result."""
    root = _results(tmp_path / "fifo", "fifo")
    with _within(LIMIT_S):
        loaded = data.load_results(root)
    assert [r.path for r in loaded.runs] == ["results/ladder-good.json"] and not loaded.journals
    root = _results(tmp_path / "deep", "deep")
    with _within(LIMIT_S), pytest.raises(UsageError,
                                         match=r"bad\.json cannot be read: JSON nested too deep"):
        data.load_results(root)


@pytest.mark.parametrize("kind", list(MAKERS))
def test_replay_refuses_by_name(tmp_path, kind):
    path = MAKERS[kind](tmp_path / "j.jsonl")
    why = "nested too deeply" if kind == "deep" else "not a regular file"
    with _within(LIMIT_S), pytest.raises(UsageError, match=why) as refused:
        load_replay(path)
    assert str(path) in str(refused.value)

