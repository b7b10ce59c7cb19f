"""Nothing read from a file reaches the compiler: a parameter name that carries compiler options
(`"X -DWPTN=4"`), or a value that is not an integer, in a journal or a database is never built,
confirmed, stored or chosen; and the backends refuse such a macro if one got through."""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import pytest

from clgemm.backends.base import define_options
from clgemm.backends.cuda import backend as cuda
from clgemm.configs import choice as kernel_choice
from clgemm.configs import lookup
from clgemm.configs.database import database_path, load
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.devices.limits import DeviceLimits
from clgemm.library import gemm as api
from clgemm.rungs import get_rung
from clgemm.tuner.journal import Journal
from clgemm.tuner.rung_tune import TuneOptions, tune_rung
from clgemm.tuner.space import build_space

INJECTED = "X -DWPTN=4"
BAD_PARAMS = [{"TS": 16, "WPT": 4, INJECTED: 1}, {"TS": "16 -DX=1", "WPT": 4},
              {"TS": 16.9, "WPT": 4}, {"TS": 16, "WPT": True}, {"TS": 16, "WPT": "4"}]
#: integers, but none a kernel can be built with: below the minimum (-DTS=-16), beyond a C int
#: (and beyond NumPy's int64, where the search's distances are computed), breaking TS % WPT
OUT_OF_RANGE = [{"TS": -16, "WPT": 4}, {"TS": 0, "WPT": 1}, {"TS": 2 ** 31, "WPT": 4},
                {"TS": 10 ** 30, "WPT": 4}, {"TS": 16, "WPT": 3}]


# -- the journal, on resume ----------------------------------------------------------------
class RecordingEvaluator:
    """Stands in for the measuring processes: remembers every configuration it is asked to
    build, and says each ran at 1 ms."""

    def __init__(self):
        self.built: list[dict] = []

    def prebuild(self, ref, configs):
        self.built += [dict(c) for c in configs]

    def evaluate(self, ref, params, repeats=None, warmup=None):
        self.built.append(dict(params))
        return {"status": "ok", "ms": 1.0, "gflops": 1.0, "rel_error": 1e-7,
                "times_ms": [1.0] * (repeats or 1)}


FAKE_DEVICE = SimpleNamespace(key="opencl-acme-gpu-1.0", backend="opencl", name="acme gpu",
                              platform="acme", driver_version="1.0", version="OpenCL 3.0",
                              limits=lambda: DeviceLimits())
HEADER = {"device": FAKE_DEVICE.key, "backend": "opencl", "driver": "1.0",
          "size": [64, 64, 64], "rungs": [3], "repeats": 1, "warmup": 0}


def _journal_with(path, configs) -> None:
    """A journal whose records (edited by hand, say) claim these configurations ran fastest."""
    with Journal.open(path, HEADER) as j:
        for config in configs:
            j.append({"kind": "search", "rung": 3, "config": config, "status": "ok",
                      "ms": 0.001, "gflops": 1e6, "rel_error": 0.0, "times_ms": [0.001]})


@pytest.mark.parametrize("strategy", ["exhaustive", "annealing"])
@pytest.mark.parametrize("confirm", [0, 2], ids=["stored-directly", "confirmed"])
def test_journal_records_never_built_on_resume(tmp_path, confirm, strategy, capsys):
    rung, problem = get_rung(3), Problem(64, 64, 64)
    space = build_space(rung, DeviceLimits(), problem)
    journal_path = tmp_path / "j.jsonl"
    _journal_with(journal_path, BAD_PARAMS + OUT_OF_RANGE)
    evaluator = RecordingEvaluator()
    db = load(FAKE_DEVICE, tmp_path / "db.json")
    options = TuneOptions(strategy=strategy, budget=2, confirm=confirm)
    with Journal.open(journal_path, HEADER) as journal:
        out = tune_rung(rung, space, journal, evaluator, options, device=FAKE_DEVICE,
                        problem=problem, db=db)
    names = set(rung.param_names())
    assert evaluator.built and all(set(c) == names for c in evaluator.built)
    assert all(type(v) is int for c in evaluator.built for v in c.values())
    assert all(rung.first_violation(c, None) is None for c in evaluator.built)
    assert all(0 < v < 2 ** 31 for c in evaluator.built for v in c.values())
    assert out.entry is not None and set(out.entry.params) == names
    assert out.measured == 2  # the skipped records do not count against the budget
    db.save()
    assert INJECTED not in (tmp_path / "db.json").read_text()
    err = capsys.readouterr().err
    assert f"{len(BAD_PARAMS) + len(OUT_OF_RANGE)} record(s) of rung 3 skipped" in err
    assert INJECTED in err


# -- the database ----------------------------------------------------------------------------
def _database_with(path, device, good: dict, bad: list[dict]) -> None:
    """The injected entries are faster and as near as the good one: only refusal skips them."""
    def entry(params, gflops):
        return {"rung": 3, "shape": [64, 64, 64], "backend": device.backend, "params": params,
                "ms": 1.0, "gflops": gflops}

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"format": "clgemm-tuning-database", "version": 1,
                                "device": device.key, "backend": device.backend,
                                "entries": [entry(good, 1.0)] + [entry(p, 1e6) for p in bad]}))


@pytest.mark.no_shipped_tuning
def test_database_entries_never_used(device, tmp_path, monkeypatch):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    # the packing kernels at every size
    monkeypatch.setattr(kernel_choice, "crossover", kernel_choice.no_crossover)
    api.clear_caches()
    path = database_path(device.key, tmp_path)
    _database_with(path, device, {"TS": 16, "WPT": 2}, BAD_PARAMS)
    api.clear_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the skipped entries are named
        found = lookup.candidates(device, get_rung(3), (64, 64, 64), [tmp_path])
        assert [f.params for f in found] == [{"TS": 16, "WPT": 2}]
        choice = api.choose_kernel(device, 64, 64, 64)
    assert (choice.rung, dict(choice.params), choice.source) == (3, {"TS": 16, "WPT": 2},
                                                                  "tuned")
    api.clear_caches()


# -- the backends' last defence ----------------------------------------------------------------
SOURCE = "__kernel void k(__global float* x) { x[0] = TS; }"


@pytest.mark.parametrize("defines,why", [
    ({INJECTED: 1}, "macro name 'X -DWPTN=4' is not a C identifier"),
    ({"TS=1 -DWPT": 4}, "is not a C identifier"),
    ({"TS": "16 -DX=1"}, r"macro TS='16 -DX=1' is not an integer"),
    ({"TS": 16.0}, "macro TS=16.0 is not an integer"),
    ({"TS": True}, "macro TS=True is not an integer"),
])
def test_backends_refuse_options_in_macros(backend, monkeypatch, defines, why):
    with pytest.raises(UsageError, match=why):
        backend.build(SOURCE, defines, "k")
    assert backend.build(SOURCE, {"TS": 16}, "k") is not None
    assert define_options({"TS": 16, "_A1": -2}) == ["-DTS=16", "-D_A1=-2"]

    modules = []  # CUDA, against a stand-in for CuPy: NVRTC is never reached
    fake = SimpleNamespace(RawModule=lambda **kw: modules.append(kw),
                           cuda=SimpleNamespace(Device=lambda i: SimpleNamespace(use=lambda: None)))
    monkeypatch.setattr(cuda, "cupy", fake)
    gpu = cuda.CUDABackend(SimpleNamespace(handle=0))
    with pytest.raises(UsageError, match=why):
        gpu.build(SOURCE, defines, "k")
    assert modules == []
