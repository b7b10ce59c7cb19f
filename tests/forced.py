"""gemm() made to run one kernel whatever the lookup chain would choose, for the tests that
need a kernel's own way of reading its operands."""

from __future__ import annotations

import pytest

from clgemm.configs import choice
from clgemm.library import gemm as api


def force_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct kernel (which reads A and B while it writes C) at every shape, configured as
    the lookup chain would configure it there; a test on a device it does not fit is skipped."""
    def direct(device, shape):
        found = choice.direct_config(device, shape)
        if found is None:
            pytest.skip("the direct kernel does not fit this device")
        return found[0]

    monkeypatch.setattr(api.CACHE, "choose", direct)
