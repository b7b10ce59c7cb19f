"""Fixtures: the default device (the first OpenCL CPU device, PoCL here) and a backend on it.

Like pyopencl's own tests, every kernel test takes the device through a fixture, so the suite can
be pointed elsewhere with CLGEMM_TEST_DEVICE (an index or a name substring) and
CLGEMM_TEST_BACKEND (opencl, the default, or cuda).
"""

from __future__ import annotations

import os
import tempfile

import pytest

# A user's own tuning (in the per-user data folder) must not change what the tests see, and the
# tests must not write there: point the folder at a fresh temporary one for the whole session,
# subprocesses included.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="clgemm-tests-data-")

from clgemm import api
from clgemm.backends import open_backend
from clgemm.backends import list_devices
from clgemm.devices import pick_device
from clgemm.problem import Problem
from clgemm.runner import Workspace


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
