"""What the commands print and write: tables that fit a terminal (120 columns, or $COLUMNS)
unless --wide, failures marked, `--json [FILE|-]` and `--csv [FILE|-]` alike on every command
with stdout holding the data alone, the JSON as docs/cli.md describes it, and $CLGEMM_DEVICE as
the device wherever none is named."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest

import clgemm
from clgemm.backends import list_devices, registry
from clgemm.cli import main, output
from clgemm.cli.ladder_tables import ladder_table
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.core.tables import Bad, Column, Layout, fit_lines, render
from clgemm.devices.info import DeviceInfo
from clgemm.library import gemm as api
from clgemm.measure.ladder import LadderRun
from clgemm.measure.rung_runner import RunResult

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

#: each command's table on PoCL-sized work: small sizes, one repeat, a quick sweep
TABLES = {
    "devices": ["devices"],
    "ladder": ["ladder", "--size", "64", "--rungs", "1-3", "--repeats", "1"],
    "ladder-all": ["ladder", "--size", "64", "--repeats", "1"],
    "ladder-vs-defaults": ["ladder", "--vs-defaults", "--size", "64", "--rungs", "1-5",
                           "--repeats", "1"],
    "model": ["model"],
    "model-rung": ["model", "--rung", "9"],
    "verify": ["verify", "--quick", "--rungs", "1,12"],
    "bench": ["bench", "--sizes", "64", "--rungs", "6,12", "--repeats", "1"],
    "bench-call": ["bench", "--call", "--sizes", "64"],
    # the tiled kernel's tiles narrowed: its whole space takes half a minute to enumerate here,
    # and the table's widest cells (its parameters) are the same in a part of it
    "tune": ["tune", "--size", "64", "--rungs", "3,12", "--budget", "2", "--jobs", "0",
             "--confirm", "0", "--repeats", "1", "--warmup", "0", "--only", "TSM=16,32",
             "--only", "TSN=16,32", "--only", "WPTM=1,2,4", "--only", "WPTN=1,2,4"],
    "tune-plan": ["tune", "--dry-run", "--rungs", "1-5", "--size", "64"],
    "explain": ["explain", "12"],
}


def run(args: list[str], env: dict[str, str] | None = None, timeout: float = 300
        ) -> subprocess.CompletedProcess:
    """The command as a user runs it, stdout a pipe (so no colour, and no terminal width)."""
    full = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR",
                                                              "CLGEMM_DEVICE")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "clgemm", *args], capture_output=True,
                          text=True, timeout=timeout, env=full)


@pytest.fixture
def results():
    """A results folder of the test's own, so tuning writes nothing the other tests read; a
    short path, as a user's is, since the tuner prints where its database went."""
    folder = tempfile.mkdtemp(prefix="clgemm-")
    yield {"CLGEMM_RESULTS": folder}
    shutil.rmtree(folder, ignore_errors=True)


def widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_table_fits_120_columns_unless_wide(name, results):
    # the comparison needs the shipped tuning, which a results folder of its own hides
    env = {} if name == "ladder-vs-defaults" else results
    fitted = run(TABLES[name], env)
    if name == "ladder-vs-defaults" and "no tuned parameters" in fitted.stderr:
        pytest.skip("nothing tuned for this device to compare with its defaults")
    assert fitted.returncode == 0, fitted.stderr
    assert fitted.stdout.strip() and "\x1b[" not in fitted.stdout
    assert widest(fitted.stdout) <= 120, fitted.stdout
    if name in ("ladder-all", "model", "verify", "explain"):  # wider than 120 in full
        wide = run(TABLES[name] + ["--wide"], env)
        assert wide.returncode == 0, wide.stderr
        assert widest(wide.stdout) > 120


def test_columns_is_honoured_wider_and_narrower():
    narrow = run(TABLES["ladder"], {"COLUMNS": "100"})
    assert narrow.returncode == 0, narrow.stderr
    assert widest(narrow.stdout) <= 100
    roomy = run(TABLES["ladder"], {"COLUMNS": "300"})
    header = next(ln for ln in roomy.stdout.splitlines() if ln.startswith("rung "))
    assert "adds" in header and "x rung 1" in header and "adds" not in narrow.stdout
    tiny = run(["model"], {"COLUMNS": "20"})  # fitted no narrower than 60: still readable
    assert tiny.returncode == 0 and widest(tiny.stdout) >= 60


def test_wide_shows_everything_as_in_full():
    wide = run(TABLES["ladder"] + ["--wide"])
    header = next(ln for ln in wide.stdout.splitlines() if ln.startswith("rung "))
    assert "adds" in header and "helper ms" in header and "x rung 1" in header
    assert "one work-item per output" in wide.stdout  # rung 1's "adds", in full
    assert "more work per work-item" in wide.stdout   # titles, not short names


def _run(status: str, message: str = "") -> LadderRun:
    dev = DeviceInfo(0, "opencl", "Test Platform", "Test CPU", "CPU", "Test", 2, 2000, 2**33,
                     2**16, 1024, (1024, 1024, 1024), 2**31, "1.0", "OpenCL 3.0")
    problem = Problem(64, 64, 64)
    rows = [RunResult(1, "naive", {"TS": 16}, "ok", ms=1.0, gflops=problem.gflops(1.0),
                      rel_error=1e-7),
            RunResult(3, "more work per work-item", {"TS": 32, "WPT": 4}, status,
                      message=message)]
    return LadderRun(dev, problem, rows, [], {1: "default", 3: "user"}, "test")


def test_a_failure_stands_out_and_its_message_moves_below_the_fitted_table():
    run_ = _run("build-failed", "build failed: error: source:12: use of undeclared 'X'\nmore")
    marked = ladder_table(run_, Layout(width=120, mark=lambda s: f"\x1b[1m{s}\x1b[0m"))
    row = next(ln for ln in marked.splitlines() if ln.startswith("3 "))
    assert "\x1b[1mbuild-failed\x1b[0m" in row and "undeclared" not in row and "WPT=4" in row
    assert "rung 3 build-failed: error: source:12: use of undeclared 'X' ..." in marked
    assert "\x1b" not in next(ln for ln in marked.splitlines() if ln.startswith("1 "))
    full = ladder_table(run_)  # in full: the message in the status column, nothing marked
    assert "build-failed: error: source:12" in full and "\x1b" not in full


def test_render_wraps_then_drops_and_marks_every_line_of_a_bad_cell():
    rows = [["1", "alpha beta gamma delta epsilon", "x" * 30, Bad("timeout after a while")]]
    cols = [Column("n", right=True), Column("text", wrap=8), Column("spare", drop=1),
            Column("status", wrap=7)]
    text = render(cols, rows, Layout(width=30, mark=lambda s: f"[{s}]"))
    assert widest(re.sub(r"[\[\]]", "", text)) <= 30 and "spare" not in text
    assert "[timeout after]" in text and "[a while]" in text  # each line marked on its own
    assert "alpha" in text and "epsilon" in text
    assert "spare" in render(cols, rows)  # in full: every column, as tabulate lays it out
    assert fit_lines(["word " * 30], Layout(width=40))[1].startswith("  word")


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.setattr(output.sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert output.colour_on()
    monkeypatch.setenv("NO_COLOR", "1")
    assert not output.colour_on()


# -- --json and --csv ------------------------------------------------------------------------
#: every command that produces results, with work small enough for PoCL
JSON_COMMANDS = {
    "devices": ["devices"],
    "ladder": ["ladder", "--size", "64", "--rungs", "1-2", "--repeats", "1"],
    "show": ["show", "5"],
    "model": ["model", "--size", "256"],
    "tune": ["tune", "--size", "64", "--rungs", "3", "--budget", "2", "--jobs", "0",
             "--confirm", "0", "--repeats", "1", "--warmup", "0"],
    "verify": ["verify", "--quick", "--rungs", "1"],
    "bench": ["bench", "--sizes", "64", "--rungs", "6", "--repeats", "1"],
    "bench-call": ["bench", "--call", "--sizes", "64"],
}
CSV_COMMANDS = ("devices", "ladder", "tune", "verify", "bench", "bench-call")


def _documented_keys() -> dict[str, list[str]]:
    """`name`: `key`, `key`, ... lines of docs/cli.md's "Top-level keys" list."""
    out = {}
    for line in DOCS.read_text().splitlines():
        m = re.match(r"- keys of `([a-z-]+)`: (.*)$", line)
        if m:
            out[m.group(1)] = re.findall(r"`([a-z_]+)`", m.group(2))
    return out


@pytest.mark.parametrize("name", sorted(JSON_COMMANDS))
def test_json_to_stdout_is_pure_json_and_documented(name, results):
    r = run(JSON_COMMANDS[name] + ["--json", "-"], results)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)  # the whole of stdout, nothing before or after
    keys = _documented_keys()
    if name == "devices":
        assert isinstance(data, list) and data[0]["index"] == 0
        assert sorted(data[0]) == sorted(keys["devices"])
    else:
        assert sorted(data) == sorted(keys[name]), "docs/cli.md's keys differ"
        assert data["format"].startswith("clgemm-")
    if name in ("devices", "model", "show"):  # no FILE: stdout as well
        flag = run(JSON_COMMANDS[name] + ["--json"], results)
        assert flag.returncode == 0 and json.loads(flag.stdout)


@pytest.mark.parametrize("name", CSV_COMMANDS)
def test_csv_to_stdout_is_pure_csv(name, results):
    r = run(JSON_COMMANDS[name] + ["--csv", "-"], results)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert rows and all(None not in row for row in rows)  # as many fields as the header
    assert len(r.stdout.splitlines()) == len(rows) + 1


def test_json_and_csv_to_files_beside_the_table(tmp_path):
    j, c = tmp_path / "out.json", tmp_path / "out.csv"
    r = run(["devices", "--json", str(j), "--csv", str(c)])
    assert r.returncode == 0 and "backend" in r.stdout  # the table still prints
    assert json.loads(j.read_text())[0]["index"] == 0
    assert next(csv.DictReader(io.StringIO(c.read_text())))["index"] == "0"
    assert f"wrote {j}" in r.stderr and f"wrote {c}" in r.stderr


def test_json_and_csv_cannot_both_take_stdout(capsys):
    assert main(["devices", "--json", "-", "--csv", "-"]) == 2
    assert "only one of them can go to stdout" in capsys.readouterr().err


def test_show_json_is_what_the_table_prints():
    r = run(["show", "5", "--param", "WPTN=4", "--json"])
    data = json.loads(r.stdout)
    assert data["macros"]["WPTN"] == 4 and data["derived"]["RTSN"] == 16
    assert "__kernel" in data["source"] and data["helpers"][0]["kernel"] == "transpose"


# -- $CLGEMM_DEVICE --------------------------------------------------------------------------
@pytest.mark.parametrize("value, needle", [("99", "no such device"),
                                           ("no-such-gpu", "no device name contains it")])
def test_a_bad_clgemm_device_is_one_error_line_naming_it(value, needle):
    r = run(["model"], {"CLGEMM_DEVICE": value})
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: CLGEMM_DEVICE={value}: ") and needle in lines[0]


def test_clgemm_device_is_every_commands_default_and_device_wins():
    last = list_devices()[-1]
    r = run(["model", "--json", "-"], {"CLGEMM_DEVICE": str(last.index)})
    assert r.returncode == 0 and json.loads(r.stdout)["device"]["index"] == last.index
    r = run(["model", "--device", "0", "--json", "-"], {"CLGEMM_DEVICE": "no-such-gpu"})
    assert r.returncode == 0 and json.loads(r.stdout)["device"]["index"] == 0


@pytest.fixture
def clgemm_device(monkeypatch):
    """Set $CLGEMM_DEVICE for the library, its device selections forgotten before and after."""
    def set_to(value: str) -> None:
        monkeypatch.setenv("CLGEMM_DEVICE", value)
        registry.clear()
    yield set_to
    monkeypatch.delenv("CLGEMM_DEVICE", raising=False)
    registry.clear()


def test_clgemm_device_is_the_librarys_default(device, clgemm_device):
    a = np.ones((3, 2), np.float32)
    clgemm_device(str(device.index))
    assert api.backend_for().device.key == device.key
    assert np.allclose(clgemm.gemm(a, a.T), 2.0)
    clgemm_device("no-such-gpu")
    with pytest.raises(UsageError, match="^CLGEMM_DEVICE=no-such-gpu: device 'no-such-gpu'"):
        api.backend_for()
    with pytest.raises(UsageError, match="CLGEMM_DEVICE"):
        clgemm.gemm(a, a.T)
    assert api.backend_for(device).device.key == device.key  # a named device wins


def test_device_arrays_win_over_clgemm_device(device, clgemm_device):
    if device.backend != "opencl":
        pytest.skip("pyopencl arrays: the OpenCL backend")
    be = api.backend_for(device)
    queue = cl.CommandQueue(be.context, device.handle)
    a = cla.to_device(queue, np.ones((3, 2), np.float32))
    b = cla.to_device(queue, np.ones((2, 4), np.float32))
    clgemm_device("no-such-gpu")
    assert np.allclose(clgemm.gemm(a, b).get(), 2.0)
