"""A backend joins clgemm by one registration, and everything above the backends runs on it: the
NumPy test backend (`numpy_backend.py`, registered by the `numpy_backend` fixture) is listed,
runs gemm() and gemm_buffers right for any layout and clgemm verify's sweep clean, runs the
ladder's rungs 1 and 2 with their checks, and is tuned by the tuner's search, whose result
gemm() then runs; all with no OpenCL."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

import numpy as np
import pytest
from click.testing import CliRunner

import clgemm
from clgemm.backends import registry
from clgemm.cli import options
from clgemm.cli.devices import devices as devices_command
from clgemm.configs import choice as kernel_choice
from clgemm.configs.database import load
from clgemm.core.errors import LaunchError, UsageError
from clgemm.core.problem import Problem
from clgemm.course.data import Device
from clgemm.devices.info import DeviceInfo, pick_device
from clgemm.library import gemm as clgemm_api
from clgemm.measure.ladder import run_ladder
from clgemm.measure.rung_runner import Workspace, run_rung
from clgemm.measure.verify import RUNNERS, run_verify
from clgemm.rungs import get_rung
from clgemm.tuner.journal import Journal
from clgemm.tuner.rung_tune import TuneOptions, journal_header, tune_rung
from clgemm.tuner.space import build_space


def _device(nb: ModuleType) -> DeviceInfo:
    return registry.device_info(nb.DEVICE_NAME)


# -- (a) it is listed, and every list of backends names it -----------------------------------------
def test_registered_backend_is_listed_everywhere(numpy_backend):
    nb = numpy_backend
    found = registry.list_devices()
    assert found[-1].backend == nb.NAME and found[-1].name == nb.DEVICE_NAME
    assert found[-1].index == len(found) - 1
    assert [d.key for d in clgemm.devices()] == [d.key for d in found]
    assert registry.select_device(nb.DEVICE_NAME, backend=nb.NAME).key == found[-1].key
    assert nb.NAME in registry.BACKEND_NAMES
    assert options.BackendChoice().convert(nb.NAME, None, None) == nb.NAME  # --backend takes it
    assert registry.label(nb.NAME) == nb.LABEL and registry.LABELS[nb.NAME] == nb.LABEL
    assert Device("k", "x", nb.NAME).label == f"x ({nb.LABEL})"
    assert registry.install_hints()[nb.NAME] == nb.INSTALL_HINT
    assert registry.array_library(nb.NAME) is None and registry.KINDS[nb.NAME].backend == nb.NAME
    result = CliRunner().invoke(devices_command, ["--json", "-"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [(d["backend"], d["name"]) for d in listed][-1] == (nb.NAME, nb.DEVICE_NAME)


def test_register_and_unregister(numpy_backend):
    nb = numpy_backend
    with pytest.raises(UsageError, match="registered already"):
        registry.register(nb)
    others = [d for d in registry.list_devices() if d.backend != nb.NAME]
    with pytest.raises(UsageError, match=f"no {nb.NAME} device found; {nb.INSTALL_HINT}"):
        pick_device(others, None, backend=nb.NAME, hints=registry.install_hints())
    registry.unregister(nb.NAME)
    try:
        assert nb.NAME not in registry.BACKEND_NAMES
        assert nb.NAME not in options.BackendChoice().choices
        assert all(d.backend != nb.NAME for d in registry.list_devices())
        assert registry.label(nb.NAME) == nb.NAME  # a name from a committed file, as it is
        with pytest.raises(UsageError, match="no backend named"):
            registry.unregister(nb.NAME)
    finally:
        registry.register(nb)  # the fixture unregisters it


def test_built_in_backends_describe_themselves():
    assert list(registry.BACKEND_NAMES)[:2] == ["opencl", "cuda"]
    assert {n: registry.label(n) for n in ("opencl", "cuda")} == {"opencl": "OpenCL",
                                                                  "cuda": "CUDA"}
    assert registry.array_libraries() == {"opencl": "pyopencl", "cuda": "cupy"}
    assert {"pyopencl", "cupy"} <= set(RUNNERS)
    assert "CuPy" in registry.install_hints()["cuda"]
    assert registry.array_signature(np.zeros((2, 2), np.float32)) is None
    assert registry.array_signature("not an array") is None


# -- (b) gemm() on it, against float64 -------------------------------------------------------------
def _operand(rng: np.random.Generator, shape: tuple[int, int], layout: str) -> np.ndarray:
    """A float32 matrix of `shape`: C- or F-ordered, a strided view into a larger one, or an
    F-ordered block of a larger one (an offset and a leading dimension, as BLAS has them)."""
    if layout == "view":
        big = rng.standard_normal((shape[0] * 2 + 3, shape[1] + 2)).astype(np.float32)
        return big[3::2, 1:shape[1] + 1]
    if layout == "block":
        big = np.asfortranarray(rng.standard_normal((shape[0] + 5, shape[1] + 1)),
                                dtype=np.float32)
        return big[2:shape[0] + 2, 1:]
    x = rng.standard_normal(shape).astype(np.float32)
    return np.asfortranarray(x) if layout == "F" else x


CASES = [  # m, n, k, trans_a, trans_b, alpha, beta, layout
    (1, 1, 1, False, False, 1.0, 0.0, "C"),
    (7, 5, 3, True, False, 2.0, 0.5, "F"),
    (33, 17, 65, False, True, -1.5, 1.0, "view"),
    (130, 129, 70, True, True, 0.25, -2.0, "C"),
    (20, 9, 11, False, False, 1.0, 1.0, "block"),
    (9, 20, 11, True, True, -1.0, 0.0, "block"),
    (64, 64, 0, False, False, 1.0, 3.0, "F"),   # K = 0: C := beta*C
    (40, 50, 30, False, True, 0.0, 0.5, "C"),   # alpha = 0: A and B not read
]


def _check_gemm(nb: ModuleType, m: int, n: int, k: int, ta: bool, tb: bool, alpha: float,
                beta: float, layout: str) -> None:
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    a = _operand(rng, (k, m) if ta else (m, k), layout)
    b = _operand(rng, (n, k) if tb else (k, n), layout)
    c = _operand(rng, (m, n), layout)
    if beta == 0:
        c[...] = np.nan  # with beta == 0, C is not read
    want = alpha * ((a.T if ta else a).astype(np.float64) @ (b.T if tb else b))
    if beta != 0:
        want += beta * c.astype(np.float64)
    out = clgemm.gemm(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb,
                      device=nb.DEVICE_NAME)
    assert out is c
    scale = max(float(np.abs(want).max()), 1.0)
    assert float(np.abs(out - want).max()) / scale < 1e-5, (m, n, k, ta, tb, layout)
    fresh = clgemm.gemm(a, b, trans_a=ta, trans_b=tb, device=nb.DEVICE_NAME)
    assert np.allclose(fresh, (a.T if ta else a).astype(np.float64) @ (b.T if tb else b),
                       rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("path", ["direct", "packed"])
def test_gemm_on_it_is_right(numpy_backend, monkeypatch, path):
    """Small products run on the direct kernel; with the crossover at zero the same products
    go through gemm()'s packing, the tiled kernel for any size and the epilogue."""
    if path == "packed":
        monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    for case in CASES:
        _check_gemm(numpy_backend, *case)
    built = set(registry.shared_backend(_device(numpy_backend)).built)
    if path == "direct":  # K = 0 and alpha = 0 have no product: the epilogue alone scales C
        assert built == {"gemm_direct", "epilogue"}
    else:
        # NumPy operands arrive tight, so only the transposes are packed for a kernel of any
        # size; the padding copies run for a tuned rung (test_gemm_runs_what_the_tuner_stored)
        assert {"gemm_tiled_any", "epilogue", "pack_transpose"} <= built
        assert "gemm_direct" not in built


#: the tiled kernel's CPU form, which reads A and BT in panels
PANELS = {"TSM": 32, "TSN": 16, "TSK": 16, "WPTM": 16, "WPTN": 8, "WIDTH": 8, "VWM": 16,
          "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1}


@pytest.mark.parametrize("rung", [None, 2, 11, 12])
def test_gemm_buffers_on_it_is_right(numpy_backend, rung):
    """gemm_buffers hands the kernels what gemm() on NumPy arrays never does: element offsets,
    leading dimensions larger than the matrix, row-major order; rung 2 forced at sizes its
    tiles do not divide is padded by the pack kernels, and the tiled kernel's panels are
    packed straight from those layouts."""
    nb = numpy_backend
    be = registry.shared_backend(_device(nb))
    rng = np.random.default_rng(7)
    m, n, k, off, pad = 37, 29, 21, 5, 3
    for order, ta, tb in [("F", False, True), ("C", True, False)]:
        mats = {"a": (k, m) if ta else (m, k), "b": (n, k) if tb else (k, n), "c": (m, n)}
        x = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in mats.items()}
        lds = {name: (shape[0] if order == "F" else shape[1]) + pad
               for name, shape in mats.items()}
        flats = {}
        for name, shape in mats.items():
            outer = shape[1] if order == "F" else shape[0]
            flat = np.full(off + lds[name] * outer, -7.0, dtype=np.float32)
            block = flat[off:].reshape(outer, lds[name])[:, :lds[name] - pad]
            block[...] = x[name].T if order == "F" else x[name]
            flats[name] = flat
        bufs = {name: be.to_device(flat) for name, flat in flats.items()}
        clgemm.gemm_buffers(m, n, k, bufs["a"], bufs["b"], bufs["c"], alpha=1.5, beta=-0.5,
                            trans_a=ta, trans_b=tb, lda=lds["a"], ldb=lds["b"], ldc=lds["c"],
                            a_offset=off, b_offset=off, c_offset=off, order=order, rung=rung,
                            params={2: {"TS": 16}, 12: PANELS}.get(rung or 0))
        got = be.to_host(bufs["c"], flats["c"].size)
        outer = n if order == "F" else m
        block = got[off:].reshape(outer, lds["c"])[:, :lds["c"] - pad]
        out = block.T if order == "F" else block
        want = 1.5 * ((x["a"].T if ta else x["a"]).astype(np.float64)
                      @ (x["b"].T if tb else x["b"])) - 0.5 * x["c"]
        assert np.abs(out - want).max() / np.abs(want).max() < 1e-5, (order, ta, tb)
        untouched = got.copy()
        untouched[off:].reshape(outer, lds["c"])[:, :lds["c"] - pad] = -7.0
        assert np.all(untouched == -7.0)  # nothing outside C's matrix was written
    if rung == 2:
        assert {"gemm_tiling", "pack_copy", "pack_transpose", "epilogue"} <= set(be.built)
    if rung == 12:
        assert "pack_panels_pair" in be.built


def test_verify_sweep_passes_on_it(numpy_backend):
    """clgemm verify's quick sweep of the kernels gemm() may run, and of gemm() itself."""
    nb = numpy_backend
    report = run_verify(_device(nb), [1, 2, 11, 13], quick=True)
    assert report.total > 50 and not report.failures, report.failures[:3]


def test_emulated_kernels_keep_the_kernels_conventions(numpy_backend):
    """A launch that breaks a kernel's conventions is refused or gives a wrong answer, as on a
    device: the test backend cannot hide a wrong offset, leading dimension or geometry."""
    nb = numpy_backend
    be = nb.open_backend(_device(nb))
    x = be.to_device(np.arange(12, dtype=np.float32))  # a 3 x 4 column-major matrix
    out = be.alloc(6)
    pack = nb.emulate("pack_copy", {"PACK_TILE": 16})
    be.launch(pack, (16, 16), (16, 16), [2, 3, 2, 3, x, 1, 3, out])  # rows 1-2 of the matrix
    assert be.to_host(out, 6).tolist() == [1, 2, 4, 5, 7, 8]
    with pytest.raises(LaunchError, match="out of bounds"):
        be.launch(pack, (16, 16), (16, 16), [2, 3, 2, 3, x, 1, 5, out])  # ld past the end
    tiling = nb.emulate("gemm_tiling", {"TS": 16})
    a, b, c = be.to_device(np.ones(256)), be.to_device(np.ones(256)), be.alloc(256)
    with pytest.raises(LaunchError, match="requires"):
        be.launch(tiling, (16, 16), (8, 8), [16, 16, 16, a, b, c])
    be.launch(tiling, (16, 16), (16, 16), [16, 16, 16, a, b, c])
    assert np.all(be.to_host(c, 256) == 16)
    ones, c = be.to_device(np.ones(1024)), be.alloc(1024)
    be.launch(tiling, (16, 16), (16, 16), [32, 32, 32, ones, ones, c])  # 1 work-group of 4
    out = be.to_host(c, 1024).reshape((32, 32), order="F")
    assert np.all(out[:16, :16] == 32) and np.isnan(out[16:]).all() and np.isnan(out[:, 16:]).all()


@pytest.mark.parametrize("m,n,padded", [(8, 12, True), (9, 12, False), (8, 9, False)])
def test_the_tuner_builds_the_kernel_for_any_size_as_gemm_does_on_its_width(numpy_backend, m, n,
                                                                           padded):
    """On its vector width the tight operands of the kernel for any size lie whole vectors
    apart, and a measurement builds it with PADDED_LD as gemm() does there; off the width, where
    gemm() would pack them, it is measured on the operands as they come. Right either way."""
    nb = numpy_backend
    be = nb.open_backend(_device(nb))
    built: list[Mapping[str, int]] = []
    build = be.build
    be.build = lambda source, defines, kernel: (built.append(dict(defines)),  # type: ignore
                                                build(source, defines, kernel))[1]
    rung, k = get_rung(13), 7
    params = rung.resolve({"TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 2, "WPTN": 2, "WIDTH": 2})
    ws = Workspace(be, Problem(m, n, k))
    result = run_rung(be, ws, rung, params)
    assert result.status == "ok", result.message
    main = [d for d in built if "TSM" in d]
    assert main and all(d.get("PADDED_LD", 0) == int(padded) for d in main)


# -- (c) the ladder's rows -------------------------------------------------------------------------
def test_ladder_rows_of_rungs_1_and_2(numpy_backend):
    nb = numpy_backend
    run = run_ladder(_device(nb), [1, 2], Problem(64, 64, 64), warmup=0, repeats=2)
    assert [(r.rung, r.status) for r in run.rows] == [(1, "ok"), (2, "ok")]
    assert all(r.rel_error is not None and r.rel_error < 1e-5 and r.gflops for r in run.rows)
    refs = {r["name"]: r for r in run.references}
    assert refs[nb.VENDOR.name]["status"] == "ok"
    data = run.to_json()
    assert data["device"]["backend"] == nb.NAME and data["pct_of_reference_base"] == nb.VENDOR.name
    be = nb.open_backend(_device(nb))
    ws = Workspace(be, Problem(48, 48, 40))
    assert run_rung(be, ws, get_rung(1), {"TS": 16}, repeats=1, warmup=0).ok
    odd = run_rung(be, ws, get_rung(2), {"TS": 16}, repeats=1, warmup=0)
    assert odd.status == "unsupported-size"  # K=40 is not a multiple of TS=16


# -- (d) the tuner's search ------------------------------------------------------------------------
class InProcessEvaluator:
    """The tuner's evaluator without its worker processes: `Evaluator` measures in a spawned
    child, which lists only the backends registered at import, not this test's; the search,
    the confirmation and the choice of the best are the tuner's own."""

    def __init__(self, device: DeviceInfo, nb: ModuleType, problem: Problem):
        self.backend = nb.open_backend(device)
        self.ws = Workspace(self.backend, problem)
        self.measured: list[dict[str, int]] = []

    def prebuild(self, ref: Any, configs: list[Mapping[str, int]]) -> None:
        pass

    def evaluate(self, ref: Any, params: Mapping[str, int], repeats: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]:
        t0 = time.perf_counter()
        self.measured.append(dict(params))
        res = run_rung(self.backend, self.ws, get_rung(int(ref)), params,
                       repeats=repeats or 1, warmup=warmup or 0).to_json()
        res.update(params=dict(params), eval_s=time.perf_counter() - t0, prebuilt="off")
        return res


def _tune_rung_2(nb: ModuleType, folder: Path) -> tuple[Any, list[dict], int, int, Any]:
    """tune_rung's exhaustive search of rung 2 at 128^3 with the in-process evaluator: the
    outcome, the journal's search records, the space's size, the evaluations, the database."""
    device, problem, rung = _device(nb), Problem(128, 128, 128), get_rung(2)
    space = build_space(rung, device.limits(), problem)
    options = TuneOptions(strategy="exhaustive", confirm=2, confirm_repeats=2)
    evaluator = InProcessEvaluator(device, nb, problem)
    db = load(device, folder / f"{device.key}.json")
    header = journal_header(device, problem, [rung], options, 1, 0, "test")
    with Journal.open(folder / "journal.jsonl", header) as journal:
        out = tune_rung(rung, space, journal, evaluator, options, device=device,
                        problem=problem, db=db)
        records = journal.results(2)
    return out, records, len(space), len(evaluator.measured), db


def test_tuner_searches_rung_2_and_picks_the_best(numpy_backend, tmp_path):
    nb = numpy_backend
    out, records, space, evaluations, _ = _tune_rung_2(nb, tmp_path)
    assert space >= 2
    assert len(records) == space and all(r["status"] == "ok" for r in records)
    # the made-up rate is best at 256 work-items: TS = 16
    assert out.entry is not None and out.entry.params == {"TS": 16}
    assert out.entry.backend == nb.NAME and out.stored
    assert evaluations > space  # the confirmation measured the best again


@pytest.mark.no_shipped_tuning
def test_gemm_runs_what_the_tuner_stored(numpy_backend, tmp_path, monkeypatch):
    """The tuned rung 2 in the user's results folder is what gemm() then runs where its tiles
    divide the sizes, and not where they do not."""
    nb = numpy_backend
    _, _, _, _, db = _tune_rung_2(nb, tmp_path)
    db.save()
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    clgemm_api.clear_caches()
    chosen = clgemm.configure(nb.DEVICE_NAME, shape=(96, 112, 64))
    assert (chosen.rung, chosen.params, chosen.source) == (2, {"TS": 16}, "tuned")
    assert clgemm.configure(nb.DEVICE_NAME, shape=(100, 90, 70)).rung == 13
    _check_gemm(nb, 96, 112, 64, False, False, 1.5, 0.5, "C")
    _check_gemm(nb, 96, 112, 64, True, True, 1.0, 0.0, "F")
    assert "gemm_tiling" in registry.shared_backend(_device(nb)).built


def test_stacks_on_it_run_in_one_batched_launch(numpy_backend):
    """A stack of products, B broadcast, is one launch of the direct kernel built BATCHED, and
    every product is right (the emulation reads each product at its stride)."""
    nb = numpy_backend
    be = registry.shared_backend(_device(nb))
    rng = np.random.default_rng(11)
    a = rng.standard_normal((5, 19, 7)).astype(np.float32)
    b = rng.standard_normal((7, 11)).astype(np.float32)
    before = len(be.launches)
    got = clgemm.matmul(a, b, device=nb.DEVICE_NAME)
    assert len(be.launches) - before == 1
    assert np.abs(got - np.matmul(a.astype(np.float64), b)).max() < 1e-4


def test_a_tune_measures_on_it_in_its_own_process(numpy_backend, tmp_path, monkeypatch):
    """$CLGEMM_BACKENDS names the test backend's module, so the tune's measuring process (a
    fresh interpreter) registers it too: clgemm.tune() searches rung 2 on the emulated device
    through the same orchestration as on a real one, and stores what it found."""
    nb = numpy_backend
    monkeypatch.setenv("CLGEMM_BACKENDS", nb.__name__)
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    result = clgemm.tune(nb.DEVICE_NAME, rungs=[2], shapes=[64], budget=3, confirm=0, jobs=0,
                         verbose=False)
    stored = [config for (rung, _), config in result.configs.items() if rung == 2]
    assert stored and stored[0].source == "tuned"
    assert result.database.is_file() and result.database.parent == tmp_path


def test_a_backend_module_that_is_none_is_one_warning(monkeypatch):
    monkeypatch.setenv("CLGEMM_BACKENDS", "no_such_module_here")
    with pytest.warns(RuntimeWarning, match="no_such_module_here not imported"):
        registry.register_modules(["no_such_module_here"])
    with pytest.warns(RuntimeWarning, match="is no backend package"):
        registry.register_modules(["json"])


def test_a_backend_without_a_bus_says_none(numpy_backend):
    """registry.bus_id is an optional question of a backend package: the NumPy test backend
    has none, and its device's bus is None rather than an error."""
    assert not hasattr(numpy_backend, "bus_id")
    assert registry.bus_id(_device(numpy_backend)) is None
