"""What a new user meets in the first hour: a blank device name, an option that only means
something with another, a size some rungs cannot do, a kernel named rather than numbered,
noisy timings, a narrow terminal, and the first `./run` setting itself up."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import clgemm
from clgemm.backends import list_devices, registry, select_device
from clgemm.cli import main
from clgemm.cli.ladder_tables import ladder_table
from clgemm.cli.output import progress
from clgemm.configs.configuration import configure_all
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.core.tables import NOISY_SPREAD, Layout, spread
from clgemm.devices.info import DeviceInfo, pick_device
from clgemm.measure import ladder as ladder_module
from clgemm.measure.ladder import LadderRun, nearest_size, size_needs
from clgemm.measure.rung_runner import RunResult
from clgemm.rungs import LIBRARY_NAMES, REGISTRY, get_rung

ROOT = Path(__file__).resolve().parent.parent


def _one_error_line(capsys, needle: str) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], err
    return lines[0]


# -- a device named by nothing -----------------------------------------------------------------
@pytest.fixture
def clean_device_env(monkeypatch):
    monkeypatch.delenv("CLGEMM_DEVICE", raising=False)
    registry.clear()
    yield monkeypatch
    registry.clear()


@pytest.mark.parametrize("spec", ["", "   "])
def test_a_blank_device_is_refused_not_device_0(spec, clean_device_env, capsys):
    assert main(["model", "--device", spec]) == 2
    _one_error_line(capsys, "names no device")
    with pytest.raises(UsageError, match="names no device"):
        select_device(spec)
    a = np.ones((2, 2), np.float32)
    with pytest.raises(UsageError, match="names no device"):
        clgemm.gemm(a, a, device=spec)


def test_a_blank_clgemm_device_is_refused_and_an_empty_one_is_unset(clean_device_env, capsys):
    clean_device_env.setenv("CLGEMM_DEVICE", " ")
    assert main(["model"]) == 2
    _one_error_line(capsys, "error: CLGEMM_DEVICE=' ': blanks name no device")
    with pytest.raises(UsageError, match="CLGEMM_DEVICE"):
        select_device(None)
    clean_device_env.setenv("CLGEMM_DEVICE", "")  # `CLGEMM_DEVICE= clgemm ...` unsets it
    assert select_device(None).key == pick_device(list_devices(), None).key


@pytest.mark.parametrize("args", [["--arrays", "numpy"], ["--arrays", "device"],
                                  ["--clblast-params", "p.json"]])
def test_bench_options_of_call_alone_are_refused_without_it(args, capsys):
    assert main(["bench", "--sizes", "64", "--rungs", "6", "--repeats", "1", *args]) == 2
    _one_error_line(capsys, f"{args[0]} {args[1]}: applies only with --call")


# -- sizes the ladder's rungs cannot do --------------------------------------------------------
def test_size_needs_reads_a_rungs_tiles():
    assert size_needs((128, 128, 16)) == "M and N multiples of 128, K of 16"
    assert size_needs((32, 32, 32)) == "M, N and K multiples of 32"
    assert size_needs((16, 16, 1)) == "M and N multiples of 16"
    assert size_needs((16, 128, 8)) == "M a multiple of 16, N of 128, K of 8"
    assert size_needs((1, 1, 1)) == "any size"


def test_nearest_size_is_the_closest_at_which_every_rung_runs(monkeypatch):
    """Two rungs whose tiles are 16 and 32 on each side; at 64 the lookup would choose a tile
    of 128 for the second, so a size tried must be judged by its own configurations."""
    rung = type("R", (), {"size_multiples": lambda self, p: (p["TS"],) * 3,
                          "defaults": lambda self: {"TS": 16},
                          "size_problem": lambda self, p, m, n, k: None if (
                              m % p["TS"] == n % p["TS"] == k % p["TS"] == 0) else "no"})()
    monkeypatch.setattr(ladder_module, "get_rung", lambda n: rung)

    def configs_at(p: Problem) -> dict:
        return {1: {"TS": 16}, 2: {"TS": 128 if p.m == 64 else 32}}

    assert nearest_size(Problem(100, 100, 100), configs_at) == Problem(96, 96, 96)
    assert nearest_size(Problem(70, 70, 70), configs_at) == Problem(96, 96, 96)  # not 64
    assert nearest_size(Problem(128, 128, 128), configs_at) is None  # every rung runs
    assert nearest_size(Problem(100, 40, 7), configs_at) == Problem(96, 32, 32)


def test_ladder_at_a_size_most_rungs_cannot_do_says_what_they_need(device, tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = tmp_path / "ladder.json"
    assert main(["ladder", "--device", str(device.index), "--size", "100", "--rungs", "1-3,10",
                 "--repeats", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    rows = {r["rung"]: r for r in json.loads(out.read_text())["rows"]}
    unsupported = [n for n, r in rows.items() if r["status"] == "unsupported-size"]
    assert unsupported and rows[10]["status"] == "ok"
    for n in unsupported:
        needs = size_needs(get_rung(n).size_multiples(rows[n]["params"]))
        line = next(ln for ln in text.splitlines() if "unsupported-size: need" in ln
                    and re.search(rf"\b{n}\b", ln.split("unsupported-size")[0]))
        assert line.endswith(needs), (needs, line)
    m = re.search(r"every selected rung runs: M=N=K=(\d+) \(--size (\d+)\)", text)
    assert m and m.group(1) == m.group(2), text
    size = int(m.group(1))
    configs = configure_all(device, [1, 2, 3, 10], [size] * 3)
    assert all(get_rung(n).size_problem(dict(c.params), size, size, size) is None
               for n, c in configs.items())


def test_ladder_help_states_the_defaults(capsys):
    assert main(["ladder", "--help"]) == 0
    words = " ".join(capsys.readouterr().out.split())
    for default in (ladder_module.DEFAULT_SIZE["CPU"], ladder_module.DEFAULT_SIZE["GPU"]):
        assert f"{default} on a" in words
    assert f"default: {ladder_module.DEFAULT_REPEATS['CPU'][1]} on a CPU" in words
    assert "multiples of their tiles" in words and "unsupported-size" in words


# -- kernels by name -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(LIBRARY_NAMES))
def test_explain_show_and_model_take_a_kernels_name(name, device, capsys):
    number = LIBRARY_NAMES[name]
    assert main(["explain", name]) == 0
    assert f"kernel {number} ('{name}'" in capsys.readouterr().out
    assert main(["show", name, "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["rung"] == number
    assert main(["model", "--device", str(device.index), "--rung", name, "--size", "256",
                 "--json", "-"]) == 0
    assert [r["rung"] for r in json.loads(capsys.readouterr().out)["rungs"]] == [number]


def test_param_takes_a_kernels_name_and_a_bad_name_is_one_line(capsys):
    assert main(["show", "tiled", "-p", "tiled:TSK=16", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["params"]["TSK"] == 16
    assert main(["explain", "tiles"]) == 2
    _one_error_line(capsys, "'tiles' is not a valid integer or kernel name")
    assert main(["show", "3", "-p", "bogus:WPT=2"]) == 2
    _one_error_line(capsys, "--param 'bogus:WPT=2': 'bogus' is not a valid integer")


# -- noise ------------------------------------------------------------------------------------------
def _device() -> DeviceInfo:
    return DeviceInfo(0, "opencl", "Test Platform", "Test CPU with a rather long name", "CPU",
                      "Test", 2, 2000, 2**33, 2**16, 1024, (1024, 1024, 1024), 2**31, "1.0",
                      "OpenCL 3.0")


def _ladder(times: dict[int, list[float]]) -> LadderRun:
    problem = Problem(64, 64, 64)
    rows = [RunResult(n, get_rung(n).title, get_rung(n).defaults(), "ok",
                      ms=float(np.median(t)), gflops=problem.gflops(float(np.median(t))),
                      rel_error=1e-7, times_ms=t) for n, t in times.items()]
    refs = [{"name": "NumPy (host BLAS, float32)", "where": "host CPU", "status": "ok",
             "ms": 0.1, "gflops": problem.gflops(0.1), "rel_error": 1e-7, "note": "",
             "timing": "host wall time"}]
    return LadderRun(_device(), problem, rows, refs, {}, "test")


def test_spread_is_range_over_median():
    assert spread([1.0, 2.0, 1.5]) == pytest.approx(1 / 1.5)
    assert spread([2.0, 1.0, 3.0, 4.0]) == pytest.approx(3 / 2.5)
    assert spread([1.0]) is None and spread([]) is None and spread(None) is None


def test_ladder_shows_the_spread_and_warns_once_for_noisy_rows():
    quiet, noisy = [1.0, 1.01, 1.02], [1.0, 2.0, 1.1]
    text = ladder_table(_ladder({1: quiet, 2: noisy, 3: [5.0, 9.0, 6.0]}), Layout(width=200))
    header = next(ln for ln in text.splitlines() if ln.startswith("rung "))
    assert "spread" in header
    assert re.search(r"^1 .* 2% ", text, re.M) and re.search(r"^2 .* 91% ", text, re.M)
    warnings = [ln for ln in text.splitlines() if ln.startswith("warning:")]
    assert len(warnings) == 1, text
    assert "rung 2 (91%)" in warnings[0] and "rung 3 (67%)" in warnings[0]
    assert "rung 1 " not in warnings[0] and f"{100 * NOISY_SPREAD:.0f}%" in warnings[0]
    calm = ladder_table(_ladder({1: quiet}), Layout(width=200))
    assert "warning:" not in calm


def test_bench_shows_the_spread_and_warns_for_what_spread_widely(device, tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["bench", "--device", str(device.index), "--sizes", "64", "--rungs", "6",
                 "--repeats", "3", "--json", str(out), "--wide"]) == 0
    text = capsys.readouterr().out
    header = next(ln for ln in text.splitlines() if ln.startswith("shape"))
    assert "spread" in header
    row = json.loads(out.read_text())["rows"][0]
    timed = [("rung 6", row["best"]["times_ms"])] + [
        (ref["key"], ref["times_ms"]) for ref in row["references"] if ref.get("times_ms")]
    noisy = [k for k, t in timed if (spread(t) or 0) > NOISY_SPREAD]
    warning = [ln for ln in text.splitlines() if ln.startswith("warning:")]
    assert bool(warning) == bool(noisy), (noisy, warning)


# -- width -------------------------------------------------------------------------------------------
def test_fitted_ladder_explains_only_the_columns_it_shows():
    run = _ladder({1: [1.0, 1.01, 1.02], 2: [2.0, 2.01, 2.02]})
    narrow = ladder_table(run, Layout(width=60))
    header = next(ln for ln in narrow.splitlines() if ln.startswith("rung "))
    assert "% ref" not in header and "% bound" not in header and "spread" not in header
    assert "% ref:" not in narrow and "% bound:" not in narrow and "spread:" not in narrow
    roomy = ladder_table(run, Layout(width=300))
    assert "% ref:" in roomy and "% bound:" in roomy and "spread:" in roomy


def test_progress_and_notes_fit_the_terminal(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    progress("rung 9 (prefetching, double-buffered tiles) " + "TSM=128 TSN=128 " * 8)
    err = capsys.readouterr().err.splitlines()
    assert len(err) > 1 and all(len(ln) <= 80 for ln in err)
    assert err[0].startswith("  rung 9") and err[1].startswith("    ")


def test_a_ladder_on_an_80_column_terminal_keeps_stderr_within_80(device, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["ladder", "--device", str(device.index), "--size", "64", "--rungs", "8-10",
                 "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip()
    too_wide = [ln for ln in captured.err.splitlines() if len(ln) > 80]
    assert not too_wide, too_wide


# -- the first ./run -----------------------------------------------------------------------------
def _stub(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_first_run_says_each_step_and_hides_the_editable_warning(tmp_path):
    """`./run` with stand-ins for python3, pip and ldconfig: the steps it takes, not their
    work. The stand-in pip warns as setuptools does through pip, a Python warning, so the
    filter that hides it is the script's own."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    venv = tmp_path / "venv"
    log = tmp_path / "pip.log"
    _stub(bin_ / "ldconfig", 'echo "	libclblast.so.1 (libc6,x86-64) => /usr/lib/libclblast.so.1"\n')
    _stub(bin_ / "python3", f"""\
        if [ "$1" = --version ]; then echo "Python 3.11.0"; exit 0; fi
        if [ "$1 $2" = "-m venv" ]; then
          mkdir -p "$3/bin"
          cat > "$3/bin/python" <<'EOF'
        #!/usr/bin/env bash
        if [ "$1" = - ]; then cat >/dev/null; exit 0; fi
        echo "$*" >> {log}
        if [ "$*" != "${{*#*-e}}" ]; then
          exec {sys.executable} -c 'import warnings; warnings.warn("Editable installation.\\n  Please be careful", UserWarning)'
        fi
        EOF
          printf '#!/usr/bin/env bash\\necho "clgemm, version 0.1.0"\\n' > "$3/bin/clgemm"
          chmod +x "$3/bin/python" "$3/bin/clgemm"
          exit 0
        fi
        exit 1
        """)
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "CLGEMM_VENV": str(venv)}
    env.pop("PYTHONWARNINGS", None)
    r = subprocess.run([str(ROOT / "run"), "clgemm", "--version"], capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "clgemm, version 0.1.0"
    said = [ln[len("run: "):] for ln in r.stderr.splitlines() if ln.startswith("run: ")]
    assert "Editable installation" not in r.stderr, r.stderr
    steps = ["creating the virtual environment", "upgrading pip",
             "installing clgemm from this checkout",
             "with its dependencies pyopencl, numpy, click, tabulate, platformdirs, filelock",
             "for the tests, pytest", "checking for an OpenCL CPU device",
             "checking for CLBlast", "set-up done"]
    for step in steps:
        assert any(step in line for line in said), (step, r.stderr)
    assert "-e .[test]" in log.read_text()
    again = subprocess.run([str(ROOT / "run"), "clgemm", "--version"], capture_output=True,
                           text=True, env=env, timeout=60)
    assert again.returncode == 0 and again.stderr == ""  # set up already: nothing to say
