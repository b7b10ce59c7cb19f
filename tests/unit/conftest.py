"""Fixtures of the unit tier: the NumPy test backend (`numpy_backend.py`), registered for one
test and unregistered after it, so kernels run here with no OpenCL at all."""

from __future__ import annotations

from types import ModuleType
from typing import Iterator

import numpy_backend as _numpy_backend
import pytest

from clgemm.backends import registry
from clgemm.library import gemm as api


@pytest.fixture
def numpy_backend() -> Iterator[ModuleType]:
    """The NumPy test backend, registered for the test; gemm()'s remembered choices and
    backends are dropped before and after, so none of them outlives its registration."""
    api.clear_caches(backends=True)
    with registry.registered(_numpy_backend):
        yield _numpy_backend
    api.clear_caches(backends=True)
