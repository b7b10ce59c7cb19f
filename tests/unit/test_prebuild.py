"""A pre-builder builds the kernel the measurement will launch. Where gemm() would split K or
read B as it lies at the tuned shape, the measured kernel is a variant (other macros) that the
small warm-up problem never builds; left to the measuring worker, each such configuration was
compiled there, one after the other, while the builders stood idle."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Mapping, Sequence

import pytest

from clgemm.backends import open_backend, registry
from clgemm.configs.database import load
from clgemm.core.problem import Problem
from clgemm.configs.launch import prepare
from clgemm.measure.rung_runner import Workspace, as_gemm_runs, measured_macros, run_rung
from clgemm.rungs import Rung, get_rung
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import TILED
from clgemm.tuner import worker
from clgemm.tuner.journal import Journal
from clgemm.tuner.rung_tune import TuneOptions, journal_header, tune_rung
from clgemm.tuner.space import build_space


def _recording_backend(nb: ModuleType, rung: Rung = TILED) -> tuple[Any, list[dict[str, int]]]:
    """The NumPy test backend, noting the macros of each build of the rung's own kernel."""
    backend = open_backend(registry.device_info(nb.DEVICE_NAME))
    built: list[dict[str, int]] = []
    build = backend.build

    def noting(source: str, defines: Mapping[str, int], kernel: str) -> Any:
        if kernel == rung.kernel:
            built.append(dict(defines))
        return build(source, defines, kernel)

    setattr(backend, "build", noting)  # this backend alone, not its class
    return backend, built


def test_prebuild_builds_the_split_variant_a_thin_product_launches(numpy_backend):
    backend, built = _recording_backend(numpy_backend)
    params = TILED.defaults()
    # one tile of C over the made-up device's 8 compute units: gemm() splits K there
    thin = Problem(*TILED.output_tile(params), 8192)
    macros = measured_macros(backend.device, TILED, params, thin)
    assert macros.get("BATCHED") == 1
    assert worker._prebuild(backend, {}, TILED, params, thin) == "ok"
    assert built == [macros]
    # the very kernel the measurement builds (run_rung's choices, built without a launch)
    measuring, measured = _recording_backend(numpy_backend)
    ws = Workspace(measuring, thin)
    slices, reads_b = as_gemm_runs(measuring.device, TILED, params, thin)
    prepare(measuring, TILED, params, thin.m, thin.n, thin.k, ws.buf_a, ws.buf_b, ws.buf_c,
            TILED.helpers_for(params), ws.scratch, slices, reads_b)
    assert measured == [macros]


def test_prebuild_runs_the_warm_up_where_it_builds_the_measured_kernel(numpy_backend):
    backend, built = _recording_backend(numpy_backend, DIRECT)
    params = DIRECT.defaults()
    tm, tn = DIRECT.output_tile(params)
    square = Problem(4 * tm, 4 * tn, 4 * tm)
    macros = measured_macros(backend.device, DIRECT, params, square)
    assert macros == measured_macros(backend.device, DIRECT, params,
                                     worker.warm_problem(DIRECT, params))
    spaces: dict[Problem, Workspace] = {}
    assert worker._prebuild(backend, spaces, DIRECT, params, square) == "ok"
    assert built == [macros] and len(spaces) == 1  # built by a launch of the warm-up problem


def test_prebuild_skips_a_warm_up_variant_the_measurement_never_launches(numpy_backend):
    """On the made-up device a one-tile product reads B as it lies and a wide one does not:
    the warm-up's kernel would be of no use to the measurement."""
    backend, built = _recording_backend(numpy_backend)
    params = TILED.defaults()
    tm, tn = TILED.output_tile(params)
    wide = Problem(8 * tm, 8 * tn, 8 * tm)
    warm = measured_macros(backend.device, TILED, params, worker.warm_problem(TILED, params))
    macros = measured_macros(backend.device, TILED, params, wide)
    assert warm != macros
    assert worker._prebuild(backend, {}, TILED, params, wide) == "ok"
    assert built == [macros]


class _BatchNoting:
    """An in-process evaluator with `builders` pre-building processes (none run), noting the
    size of each batch the search hands it to build ahead."""

    def __init__(self, nb: ModuleType, problem: Problem, builders: int, eval_s: float = 0.0):
        self.backend = open_backend(registry.device_info(nb.DEVICE_NAME))
        self.ws = Workspace(self.backend, problem)
        self.builders = builders
        self.eval_s = eval_s  # what each measurement says it took in the worker
        self.batches: list[int] = []

    def prebuild(self, ref: Any, configs: Sequence[Mapping[str, int]]) -> None:
        self.batches.append(len(configs))

    def evaluate(self, ref: Any, params: Mapping[str, int], repeats: int | None = None,
                 warmup: int | None = None) -> dict[str, Any]:
        res = run_rung(self.backend, self.ws, get_rung(int(ref)), params, repeats=1,
                       warmup=0).to_json()
        return {**res, "params": dict(params), "eval_s": self.eval_s, "prebuilt": "off"}


def _batches(nb: ModuleType, folder: Any, builders: int, eval_s: float) -> list[int]:
    """The sizes of the first three batches a random search of rung 6 hands the evaluator."""
    device, problem, rung = registry.device_info(nb.DEVICE_NAME), Problem(256, 256, 256), \
        get_rung(6)
    space = build_space(rung, device.limits(), problem)
    options = TuneOptions(strategy="random", budget=48, confirm=1, confirm_repeats=1)
    assert len(space) > 48
    evaluator = _BatchNoting(nb, problem, builders, eval_s)
    header = journal_header(device, problem, [rung], options, 1, 0, "test")
    with Journal.open(folder / "journal.jsonl", header) as journal:
        tune_rung(rung, space, journal, evaluator, options, device=device, problem=problem,
                  db=load(device, folder / f"{device.key}.json"))
    return evaluator.batches[:3]


@pytest.mark.parametrize("builders, batch", [(0, 4), (2, 4), (16, 16)])
def test_a_search_waiting_on_its_builds_gives_every_builder_one(numpy_backend, tmp_path,
                                                                builders, batch):
    """A batch smaller than the builders waits on its slowest compile while the rest stand
    idle: where measuring takes no time, the search proposes as many as can be built at once
    after its first batch, never fewer than its batch."""
    assert _batches(numpy_backend, tmp_path, builders, 0.0) == [4, batch, batch]


def test_a_search_whose_time_goes_to_measuring_keeps_its_batch(numpy_backend, tmp_path):
    """Where measuring takes the time, small batches let the strategy move more often."""
    assert _batches(numpy_backend, tmp_path, 16, 5.0) == [4, 4, 4]
