"""Tuning databases of many machines merged into one folder: per device the best verified entry
of each slot with its own provenance, other formats refused before anything is written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clgemm.configs.database import FORMAT, VERSION, Database, Entry, read_any
from clgemm.configs.merge import merge
from clgemm.core.errors import UsageError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
KEY_A = "opencl-lab-gpu-a-1.0"
KEY_B = "opencl-lab-gpu-b-1.0"


def _entry(ts: int, gflops: float, shape: int = 64, host: str = "one") -> Entry:
    return Entry(1, [shape] * 3, "opencl", {"TS": ts}, 1.0, gflops, rel_error=1e-7, repeats=10,
                 provenance={"host": host, "date": "2026-11-26"})


def _file(path: Path, key: str, entries: list[Entry]) -> Path:
    db = Database(path, key, "opencl", entries, meta={"name": key, "type": "GPU"})
    db.save()
    return path


def _slots(path: Path) -> dict[tuple, dict]:
    return {(e.rung, tuple(e.shape), e.batch): {"params": e.params, "gflops": e.gflops,
                                                 "host": e.provenance.get("host")}
            for e in read_any(path).entries}


def test_the_best_entry_of_each_slot_is_kept_with_its_provenance(tmp_path):
    one = _file(tmp_path / "one.json", KEY_A, [_entry(8, 10.0, 64, "one"),
                                                _entry(16, 30.0, 128, "one")])
    two = _file(tmp_path / "two.json", KEY_A, [_entry(16, 20.0, 64, "two"),
                                                _entry(8, 5.0, 128, "two"),
                                                _entry(4, 7.0, 256, "two")])
    other = _file(tmp_path / "other.json", KEY_B, [_entry(4, 1.0, 64, "three")])
    out = tmp_path / "pool"
    done = merge([one, two, other], out)
    assert sorted(m.device_key for m in done) == [KEY_A, KEY_B]
    slots = _slots(out / f"{KEY_A}.json")
    assert slots[(1, (64, 64, 64), 1)] == {"params": {"TS": 16}, "gflops": 20.0, "host": "two"}
    assert slots[(1, (128, 128, 128), 1)] == {"params": {"TS": 16}, "gflops": 30.0,
                                              "host": "one"}
    assert slots[(1, (256, 256, 256), 1)]["host"] == "two"
    assert _slots(out / f"{KEY_B}.json")[(1, (64, 64, 64), 1)]["host"] == "three"
    a = next(m for m in done if m.device_key == KEY_A)
    assert a.stored == 4 and len(a.outcomes) == 5  # the slower 128-cubed entry kept out
    # merging again changes nothing: the same entries re-measure the stored parameters
    before = (out / f"{KEY_A}.json").read_text()
    merge([two, one], out)
    assert _slots(out / f"{KEY_A}.json") == _slots(tmp_path / "pool" / f"{KEY_A}.json")
    assert json.loads((out / f"{KEY_A}.json").read_text())["entries"] == \
        json.loads(before)["entries"]


def test_a_merge_adds_to_what_the_folder_holds(tmp_path):
    out = tmp_path / "pool"
    _file(out / f"{KEY_A}.json", KEY_A, [_entry(8, 50.0, 64, "shipped")])
    new = _file(tmp_path / "new.json", KEY_A, [_entry(16, 20.0, 64, "new"),
                                                _entry(16, 20.0, 512, "new")])
    merge([new], out)
    slots = _slots(out / f"{KEY_A}.json")
    assert slots[(1, (64, 64, 64), 1)]["host"] == "shipped"  # faster, kept
    assert slots[(1, (512, 512, 512), 1)]["host"] == "new"


@pytest.mark.parametrize("text, message", [
    ("not json", "not valid JSON"),
    (json.dumps({"format": "something-else", "entries": []}), "not a clgemm tuning database"),
    (json.dumps({"format": FORMAT, "version": VERSION + 1, "device": KEY_A, "backend": "opencl",
                 "entries": []}), "format version"),
])
def test_a_file_of_another_format_stops_the_merge_before_anything_is_written(tmp_path, text,
                                                                            message):
    good = _file(tmp_path / "good.json", KEY_A, [_entry(8, 10.0)])
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    out = tmp_path / "pool"
    with pytest.raises(UsageError, match=message):
        merge([good, bad], out)
    assert not out.exists()


def test_unusable_entries_of_a_source_are_left_out(tmp_path):
    src = tmp_path / "src.json"
    _file(src, KEY_A, [_entry(8, 10.0)])
    data = json.loads(src.read_text())
    data["entries"].append({**data["entries"][0], "params": {"NOPE": 3}, "gflops": 999.0})
    data["entries"].append({"rung": 1, "shape": [0, 0, 0]})
    src.write_text(json.dumps(data))
    with pytest.warns(RuntimeWarning):
        [m] = merge([src], tmp_path / "pool")
    assert m.skipped == 2 and m.stored == 1
    assert _slots(tmp_path / "pool" / f"{KEY_A}.json")[(1, (64, 64, 64), 1)]["gflops"] == 10.0


def test_the_command_merges_and_refuses_in_one_line(tmp_path):
    one = _file(tmp_path / "one.json", KEY_A, [_entry(8, 10.0)])
    run = [sys.executable, "-m", "clgemm", "merge"]
    r = subprocess.run([*run, str(one), "--into", str(tmp_path / "pool"), "--json", "-"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["format"] == "clgemm-merge"
    documented = {m.group(1): re.findall(r"`([a-z_]+)`", m.group(2)) for m in re.finditer(
        r"^- keys of (?:each of )?`([a-z-]+)`: (.*)$", DOCS.read_text(), re.MULTILINE)}
    assert sorted(data) == sorted(documented["merge"])
    assert sorted(data["databases"][0]) == sorted(documented["databases"])
    assert sorted(data["databases"][0]["entries"][0]) == sorted(documented["entries"])
    assert data["databases"][0]["entries"][0]["stored"] is True
    r = subprocess.run([*run, str(tmp_path / "missing.json"), "--into", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "no such file" in r.stderr
    assert "Traceback" not in r.stderr
