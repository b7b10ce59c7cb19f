"""The package's own names, as a Python program uses them: `devices` numbers devices as the
command does, `configure` answers what the ladder and gemm() would run, and `tune` runs the
command's tuning, stores where the command stores, and is seen by gemm() at once."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import clgemm
from clgemm.configs.configuration import configure as configure_in_config
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.library import gemm as api

ROOT = Path(__file__).resolve().parent.parent


def test_public_names_exist():
    for name in clgemm.__all__:
        assert hasattr(clgemm, name), name
    assert callable(clgemm.devices) and callable(clgemm.configure) and callable(clgemm.tune)


def test_the_namespace_holds_the_public_api_only():
    """dir() lists what __all__ lists; no helper the package uses itself (a typing name, the
    future-import flag, a function of the layers below) is a public name beside them.
    Submodules stay reachable as attributes, as the import system binds them."""
    assert dir(clgemm) == sorted(clgemm.__all__)
    stray = [name for name, value in vars(clgemm).items()
             if not name.startswith("_") and not isinstance(value, types.ModuleType)
             and name not in clgemm.__all__]
    assert stray == []
    assert clgemm.library.gemm.gemm is clgemm.gemm


def test_out_is_another_name_for_c(device):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((30, 20), dtype=np.float32)
    b = rng.standard_normal((20, 40), dtype=np.float32)
    out = np.full((30, 40), np.nan, np.float32)
    assert clgemm.gemm(a, b, out=out, device=device) is out
    assert np.allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    c = np.ones((30, 40), np.float32)
    clgemm.gemm(a, b, out=c, beta=2.0, device=device)
    assert np.allclose(c, a.astype(np.float64) @ b + 2, rtol=1e-4, atol=1e-4)
    with pytest.raises(ArgumentTypeError, match="both c and out"):
        clgemm.gemm(a, b, c, out=out, device=device)


def test_devices_are_numbered_as_the_command_numbers_them():
    r = subprocess.run([sys.executable, "-m", "clgemm", "devices", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    listed = [(d["index"], d["backend"], d["name"]) for d in json.loads(r.stdout)]
    assert [(d.index, d.backend, d.name) for d in clgemm.devices()] == listed


def test_nothing_reaches_the_devices_module_through_the_package_attribute():
    """`clgemm.devices` is the function; the package stays importable as clgemm.devices only in
    `from clgemm.devices.info import X` form, so no code may reach it as an attribute."""
    bad = []
    for path in [*(ROOT / "clgemm").rglob("*.py"), *(ROOT / "tests").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                bad += [f"{path}: import {a.name}" for a in node.names
                        if a.name.split(".")[:2] == ["clgemm", "devices"]]
            elif isinstance(node, ast.ImportFrom) and any(a.name == "devices"
                                                          for a in node.names):
                if node.module == "clgemm" or (node.level and not node.module):
                    bad.append(f"{path}:{node.lineno}: from {node.module or '.'} import devices")
    assert bad == []


def test_configure_a_rung_is_what_the_ladder_runs(device):
    shape = (128, 64, 256)
    got = clgemm.configure(device, 6, shape)
    assert got == configure_in_config(device, 6, shape)
    assert got.rung == 6 and set(got.params) == set(clgemm.Config(6, {}).record.param_names())
    assert clgemm.configure(device, "tiled", 256) == configure_in_config(device, 12, (256,) * 3)
    assert clgemm.configure(device.index, 3, 256) == clgemm.configure(device, 3, (256, 256, 256))


def test_configure_without_a_rung_is_gemms_choice(device):
    api.clear_caches()
    for shape in [(64, 64, 64), (1000, 700, 300)]:
        assert clgemm.configure(device, None, shape) == api.choose_kernel(device, *shape)
    size = 512 if device.is_cpu else 4096
    assert clgemm.configure(device) == api.choose_kernel(device, size, size, size)


@pytest.mark.parametrize("kwargs,error,needle", [
    ({"rung": 99}, UsageError, "99"),
    ({"rung": "1-3"}, UsageError, "name one kernel"),
    ({"shape": (64, 64)}, UsageError, "one size or three"),
    ({"shape": 0}, UsageError, "positive integer"),
])
def test_configure_refuses_what_it_cannot_answer(device, kwargs, error, needle):
    with pytest.raises(error, match=needle):
        clgemm.configure(device, **kwargs)


@pytest.mark.parametrize("kwargs,error,needle", [
    ({"seconds": 5, "budget": 3}, UsageError, "not several"),
    ({"budget": 3, "exhaustive": True}, UsageError, "not several"),
    ({"seconds": -1}, UsageError, "seconds=-1: must be positive"),
    ({"seconds": float("nan")}, UsageError, "must be a finite number"),
    ({"budget": "3"}, ArgumentTypeError, "budget='3': must be a number"),
    ({"strategy": "hillclimb"}, UsageError, "hillclimb"),
    ({"rungs": 99}, UsageError, "99"),
    ({"rungs": [3.5]}, ArgumentTypeError, "neither a rung number nor a name"),
    ({"shapes": [(64, 64)]}, ArgumentTypeError, "neither a size, an"),
    ({"shapes": "64x64"}, UsageError, "is not S, MxNxK or BATCHxMxNxK"),
    ({"only": {"VWM": [1, 4]}}, UsageError, "none of the chosen rungs has a parameter VWM"),
])
def test_tune_refuses_bad_arguments_before_measuring(device, tmp_path, monkeypatch, kwargs,
                                                     error, needle):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    args = {"rungs": 3, "shapes": 64, **kwargs}
    if not {"seconds", "budget", "exhaustive"} & set(kwargs):
        args["budget"] = 2
    with pytest.raises(error, match=needle):
        clgemm.tune(device, verbose=False, **args)
    assert not any(tmp_path.iterdir())


@pytest.mark.no_shipped_tuning
def test_tune_stores_where_the_command_does_and_gemm_sees_it(device, tmp_path, monkeypatch,
                                                             capsys):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    api.clear_caches()
    shape = (64, 64, 64)
    result = clgemm.tune(device, rungs=3, shapes=64, budget=3, confirm=1, verbose=False)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""                  # verbose=False prints nothing
    assert result.device.key == device.key
    assert result.database == tmp_path / f"{device.key}.json" and result.database.is_file()
    assert [p.parent.parent.name for p in result.journals] == ["journals"]
    assert all(p.is_file() for p in result.journals)
    assert [(s, o.rung) for s, o in result.outcomes] == [(shape, 3)]
    assert list(result.configs) == [(3, shape)]
    stored = result.configs[(3, shape)]
    assert stored.source == "tuned"
    entries = json.loads(result.database.read_text())["entries"]
    assert [(e["rung"], e["params"]) for e in entries] == [(3, dict(stored.params))]
    assert "TS=" in result.table() and "stored" in result.table()
    # what configure (and so the ladder and gemm) use from now on, in this process
    assert clgemm.configure(device, 3, shape) == stored
    api.clear_caches()
