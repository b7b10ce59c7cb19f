"""Fixtures of the unit tier: the NumPy test backend (`numpy_backend.py`), registered for one
test and unregistered after it, so kernels run here with no OpenCL at all."""

from __future__ import annotations

from types import ModuleType
from typing import Iterator

import numpy_backend as _numpy_backend
import pytest

from clgemm.backends import registry
from clgemm.configs import lookup
from clgemm.library import gemm as api


@pytest.fixture
def numpy_backend() -> Iterator[ModuleType]:
    """The NumPy test backend, registered for the test; gemm()'s remembered choices and
    backends are dropped before and after, so none of them outlives its registration."""
    api.clear_caches(backends=True)
    with registry.registered(_numpy_backend):
        yield _numpy_backend
    api.clear_caches(backends=True)


@pytest.fixture
def stored(monkeypatch) -> dict[int, list[lookup.Found]]:
    """What the lookup holds for the device, by kernel number, set by each test: for one
    product; nothing measured on stacks."""
    held: dict[int, list[lookup.Found]] = {}

    def candidates(device, rung, shape, roots=None, batch=1):
        return list(held.get(rung.number, [])) if batch == 1 else []

    monkeypatch.setattr(lookup, "candidates", candidates)
    return held
