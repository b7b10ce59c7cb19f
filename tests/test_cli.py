"""The command line end to end, in a subprocess as a user runs it: output, JSON and error paths."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def clgemm(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clgemm", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_devices_table_and_json():
    table = clgemm("devices")
    assert table.returncode == 0, table.stderr
    assert "CPU" in table.stdout
    js = clgemm("devices", "--json")
    assert js.returncode == 0
    devices = json.loads(js.stdout)
    assert devices[0]["index"] == 0
    for field in ("platform", "name", "type", "compute_units", "clock_mhz", "global_mem_bytes",
                  "local_mem_bytes", "max_work_group_size", "driver_version", "key"):
        assert field in devices[0]


def test_ladder_json(tmp_path):
    out = tmp_path / "out.json"
    r = clgemm("ladder", "--device", "0", "--size", "128", "--rungs", "1-5", "--json", str(out),
               "--repeats", "1")
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["size"] == [128, 128, 128]
    assert [row["rung"] for row in data["rows"]] == [1, 2, 3, 4, 5]
    for row in data["rows"]:
        assert row["status"] == "ok", row
        assert row["gflops"] > 0 and row["rel_error"] < 1e-5
        assert set(row["params"]) == set(row["params"])  # present
    assert data["device"]["type"] == "CPU"
    assert data["references"][0]["name"].startswith("NumPy")
    assert "command" in data["provenance"] and "date" in data["provenance"]
    assert "naive" in r.stdout and "ref" in r.stdout


def test_ladder_device_by_name_and_params(tmp_path):
    r = clgemm("ladder", "--device", "PTHREAD", "--mnk", "64", "32", "96", "--rungs", "3",
               "--param", "3:TS=16", "--param", "WPT=2", "--repeats", "1")
    assert r.returncode == 0, r.stderr
    assert "TS=16 WPT=2" in r.stdout and "user" in r.stdout


@pytest.mark.parametrize("args,needle", [
    (("ladder", "--device", "7"), "no such device"),
    (("ladder", "--device", "no-such-gpu"), "no device name contains it"),
    (("ladder", "--size", "0"), "must be a positive integer"),
    (("ladder", "--size", "-5"), "must be a positive integer"),
    (("ladder", "--size", "abc"), "'abc' is not a valid integer"),
    (("ladder", "--size", "64", "--mnk", "1", "2", "3"), "not both"),
    (("ladder", "--rungs", "1-99"), "there is no rung"),
    (("ladder", "--rungs", "3", "--param", "WPT=3"), "TS % WPT == 0"),
    (("ladder", "--rungs", "4", "--param", "4:WIDTH=16"), "WIDTH is 1, 2, 4 or 8"),
    (("ladder", "--rungs", "2", "--param", "TS=16", "--size", "40"), "not a multiple of 16"),
    (("ladder", "--rungs", "1", "--param", "WPT=2"), "no selected rung has a parameter WPT"),
    (("ladder", "--param", "TS"), "write NAME=VALUE"),
    (("ladder", "--repeats", "0"), "--repeats 0"),
    (("ladder", "--size", "200000"), "32-bit indexing"),
    (("ladder", "--size", "30000", "--rungs", "10"), "3.35 GiB"),
    (("ladder", "--size", "30000", "--rungs", "10", "--vs-defaults"), "GiB"),
    (("show", "42"), "there is no rung 42"),
])
def test_bad_input_one_line_exit_2(args, needle):
    r = clgemm(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error:") and needle in lines[0], lines[0]


def test_show_prints_macros_then_source():
    r = clgemm("show", "5", "--param", "WPTN=4")
    assert r.returncode == 0, r.stderr
    assert "#define WPTN 4" in r.stdout and "RTSN = 16" in r.stdout   # RTSN: derived, not set
    assert "transpose" in r.stdout
    assert r.stdout.index("#define TSM") < r.stdout.index("__kernel")
