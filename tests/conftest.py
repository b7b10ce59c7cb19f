"""Fixtures: the default device (the first OpenCL CPU device, PoCL here) and a backend on it.

Like pyopencl's own tests, every kernel test takes the device through a fixture, so the suite can
be pointed elsewhere with CLGEMM_TEST_DEVICE (an index or a name substring) and
CLGEMM_TEST_BACKEND (opencl, the default, or cuda).
"""

from __future__ import annotations

import os

import pytest

from clgemm.backends import open_backend
from clgemm.devices import list_devices, select_device
from clgemm.runner import Problem, Workspace


@pytest.fixture(scope="session")
def device():
    devices = list_devices()
    if not devices:
        pytest.skip("no OpenCL device")
    return select_device(os.environ.get("CLGEMM_TEST_DEVICE"), devices,
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
