"""`clgemm.tune()` as a program calls it: the journals reused as the command reuses them, every
message naming the function's keywords rather than the command's options, and a script that
calls it without a main guard told exactly that, with nothing left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import clgemm
from clgemm.core.errors import UsageError
from clgemm.core.locks import try_hold
from clgemm.tuner.journal import default_journal_path, read_journal

TINY = {"rungs": 1, "shapes": 32, "budget": 1, "confirm": 0, "jobs": 0, "repeats": 1,
        "warmup": 0, "verbose": False}


def _foreign(path: Path) -> str:
    """A journal of the same slot made under another driver."""
    header = {"format": "clgemm-tune-journal", "version": 2, "device": "d", "backend": "opencl",
              "driver": "another", "size": [32, 32, 32], "rungs": [1]}
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(header) + "\n"
    path.write_text(text)
    return text


def test_messages_name_keywords_not_options(device, tmp_path, monkeypatch):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    journal = default_journal_path(tmp_path, device.key, 1, (32, 32, 32))
    text = _foreign(journal)
    with pytest.raises(UsageError) as foreign:
        clgemm.tune(device, **TINY)
    assert "its driver is 'another'" in str(foreign.value)
    assert "fresh=True moves it aside" in str(foreign.value)
    held = try_hold(journal)
    try:
        with pytest.raises(UsageError) as busy:
            clgemm.tune(device, **TINY)
    finally:
        held.release()
    assert "in use by another clgemm tune; wait for it to finish" in str(busy.value)
    with pytest.raises(UsageError) as strategy:
        clgemm.tune(device, **{**TINY, "strategy": "hillclimb"})
    assert str(strategy.value).startswith("strategy='hillclimb': unknown")
    with pytest.raises(UsageError, match="fresh=True starts the journals over"):
        clgemm.tune(device, fresh=True, resume=True, **TINY)
    for error in (foreign, busy, strategy):
        assert "--" not in str(error.value), error.value
    assert journal.read_text() == text


def test_fresh_moves_the_journal_aside_and_a_second_run_reuses(device, tmp_path, monkeypatch):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    journal = default_journal_path(tmp_path, device.key, 1, (32, 32, 32))
    text = _foreign(journal)
    first = clgemm.tune(device, fresh=True, **TINY)
    assert journal.with_name(journal.name + ".old1").read_text() == text
    assert first.outcomes[0][1].measured_now == 1
    second = clgemm.tune(device, resume=True, **TINY)  # resume: accepted, changes nothing
    assert second.outcomes[0][1].measured_now == 0 and second.outcomes[0][1].measured == 1
    search = [r for r in read_journal(journal)[1] if r.get("kind") == "search"]
    assert len(search) == 1


SCRIPT = """import clgemm
{indent}result = clgemm.tune(0, rungs=1, shapes=32, budget=2, jobs=1, confirm=0, verbose=False)
{indent}print("stored", len(result.configs))
"""


def _run(script: Path, results: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "CLGEMM_RESULTS": str(results)},
                          cwd=script.parent)


def test_a_script_without_main_guard_is_told_and_leaves_nothing(tmp_path):
    """The measuring processes run the calling script again; without `if __name__ ==
    "__main__":` each of them calls tune() too. The script is told that in one message (not
    "the measuring process could not start"), and no journal is left to trouble the next
    run: the same script with the guard then runs as if the first had never been."""
    results = tmp_path / "results"
    bare = tmp_path / "bare.py"
    bare.write_text(SCRIPT.format(indent="").replace("import clgemm\n", "import clgemm\n\n"))
    r = _run(bare, results)
    assert r.returncode == 1, r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"clgemm.core.errors.UsageError: clgemm.tune() is called at the top level "
                           f"of the script {bare}"), r.stderr
    assert "if __name__ == \"__main__\":" in last and "could not start" not in r.stderr
    assert "stored" not in r.stdout
    assert not list(results.rglob("*.jsonl"))

    guarded = tmp_path / "guarded.py"
    guarded.write_text(SCRIPT.format(indent="    ").replace(
        "import clgemm\n", "import clgemm\n\nif __name__ == \"__main__\":\n"))
    r = _run(guarded, results)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["stored 1"]
    [journal] = results.rglob("*.jsonl")
    records = read_journal(journal)[1]
    # begun by this run (no "resume" line), its search's seconds written last
    assert [r.get("kind") for r in records] == ["search", "search", "spent"]
