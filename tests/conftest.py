"""Fixtures: the default device (the first OpenCL CPU device, PoCL here) and a backend on it.

Like pyopencl's own tests, every kernel test takes the device through a fixture, so the suite can
be pointed elsewhere with CLGEMM_TEST_DEVICE (an index or a name substring) and
CLGEMM_TEST_BACKEND (opencl, the default, or cuda).

A test that must see no tuning but its own (a results folder of its own in $CLGEMM_RESULTS, which
chooses where results go, not what is read) also turns the shipped databases off: it takes the
`no_shipped_tuning` fixture or mark.
"""

from __future__ import annotations

import os
import tempfile
from typing import Iterator

import numpy as np
import pytest

# A user's own tuning (in the per-user data folder) must not change what the tests see, and the
# tests must not write there: point the folder at a fresh temporary one for the whole session,
# subprocesses included. The shipped databases are read unless a test turns them off itself,
# whatever the shell running the suite says.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="clgemm-tests-data-")
os.environ.pop("CLGEMM_SHIPPED_TUNING", None)

from clgemm.backends import list_devices, open_backend
from clgemm.configs import choice, lookup, splits
from clgemm.configs.configuration import Config
from clgemm.configs.database import SHIPPED_SWITCH
from clgemm.core.problem import Problem
from clgemm.devices.info import pick_device
from clgemm.library import gemm as api
from clgemm.library import stack_tiled
from clgemm.measure.rung_runner import Workspace
from clgemm.rungs.tiled import TILED
from layouts import rand, reference

#: fixtures that promise a test no tuned entries at all
EMPTY_TUNING_FIXTURES = {"empty_db"}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "no_shipped_tuning: the test reads no shipped tuning "
                                       f"database (${SHIPPED_SWITCH}=0)")


def _wants_no_shipped_tuning(request: pytest.FixtureRequest) -> bool:
    node = request.node
    return (node.get_closest_marker("no_shipped_tuning") is not None
            or bool(EMPTY_TUNING_FIXTURES & set(request.fixturenames)))


@pytest.fixture
def no_shipped_tuning(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shipped tuning databases unread for this test (subprocesses included), with the
    lookup's and gemm()'s remembered files and choices dropped before and after."""
    monkeypatch.setenv(SHIPPED_SWITCH, "0")
    api.clear_caches()
    lookup.forget()
    yield
    api.clear_caches()
    lookup.forget()


@pytest.fixture(autouse=True)
def _shipped_tuning_as_needed(request: pytest.FixtureRequest) -> None:
    if _wants_no_shipped_tuning(request):
        request.getfixturevalue("no_shipped_tuning")


@pytest.fixture(scope="session")
def device():
    devices = list_devices()
    if not devices:
        pytest.skip("no OpenCL device")
    return pick_device(devices, os.environ.get("CLGEMM_TEST_DEVICE"),
                         backend=os.environ.get("CLGEMM_TEST_BACKEND", "opencl"))


@pytest.fixture(scope="session")
def backend(device):
    b = open_backend(device)
    yield b
    b.release()


@pytest.fixture(scope="session")
def workspace_for(backend):
    """Workspaces cached by size, so inputs and references are made once per session."""
    cache: dict[tuple[int, int, int], Workspace] = {}

    def get(m: int, n: int, k: int) -> Workspace:
        if (m, n, k) not in cache:
            cache[(m, n, k)] = Workspace(backend, Problem(m, n, k), seed=m * 7 + n * 3 + k)
        return cache[(m, n, k)]

    return get


def _every_device_param() -> list:
    """One pytest param per listed device, OpenCL and CUDA alike, the CUDA ones marked `cuda`
    (as pyopencl's context factory runs one test body on every platform)."""
    params = []
    for d in list_devices():
        marks = [pytest.mark.cuda] if d.backend == "cuda" else []
        params.append(pytest.param(d, id=f"{d.backend}:{d.index}", marks=marks))
    return params or [pytest.param(None, id="no-device")]


@pytest.fixture(params=_every_device_param())
def every_backend(request):
    """The library's shared backend on each device present, in turn."""
    if request.param is None:
        pytest.skip("no device")
    api.clear_caches()
    return api.backend_for(request.param)


@pytest.fixture
def forced_tiled(monkeypatch):
    """gemm() made to run the tiled kernel with the given parameters on a backend, with
    `read_b_pays` answering as given wherever it is asked: `forced_tiled(be, params, pays)`
    returns the configuration."""
    def force(be, params, pays):
        config = api.user_config(be.device, TILED.number, params)
        monkeypatch.setattr(api.CACHE, "choose", lambda device, shape: config)
        monkeypatch.setattr(choice, "read_b_pays", lambda device, shape: pays)
        monkeypatch.setattr(splits, "read_b_pays", lambda device, shape: pays)
        api.clear_caches()
        return config
    yield force
    api.clear_caches()


@pytest.fixture
def split_call_watched(monkeypatch, forced_tiled):
    """A call of several launches forced on a backend (the tiled kernel, K in four slices, then
    their sum) with the scratch it takes from the pool watched: `split_call_watched(be, seed)`
    returns C-ordered host operands A and B, the float64 reference, C's shape and the list
    every scratch request of the backend goes into."""
    def make(be, seed):
        monkeypatch.setattr(choice, "tiled_split", lambda device, config, shape: 4)
        tiled = forced_tiled(be, {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1}, False)
        tm, tn, tk = TILED.size_multiples(tiled.params)
        rng = np.random.default_rng(seed)
        a, b = rand(rng, (tn, 8 * tk)), rand(rng, (8 * tk, tm))  # the kernels see n x m
        taken: list[int] = []
        real = be.scratch
        monkeypatch.setattr(be, "scratch", lambda count, queue=None: taken.append(count) or
                            real(count, queue))
        return a, b, reference(a, b, None, 1.0, 0.0, False, False), (tn, tm), taken
    return make


@pytest.fixture
def stacks_on(monkeypatch):
    """Stacks made to run on the tiled kernel with the given parameters wherever their sizes
    are multiples of its tiles (`on_stack`: as a configuration measured on a stack, which
    reads each product's B where it lies): `stacks_on(params, on_stack)` returns the tiles."""
    def force(params, on_stack):
        tm, tn, tk = TILED.size_multiples(params)

        config = Config(TILED.number, TILED.resolve(dict(params)), "user")

        def suits(be, m, n, k, count):
            return (None, False) if m % tm or n % tn or k % tk else (config, on_stack)
        monkeypatch.setattr(stack_tiled, "stack_params", suits)
        api.clear_caches()
        return tm, tn, tk
    yield force
    api.clear_caches()
