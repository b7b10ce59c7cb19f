"""gemm() made to run one kernel whatever the lookup chain would choose, for the tests that
need a kernel's own way of reading its operands."""

from __future__ import annotations

from typing import Any

import pytest

from clgemm.configs import choice, database
from clgemm.core.errors import LaunchError
from clgemm.library import gemm as api
from clgemm.rungs import get_rung


def force_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """The direct kernel (which reads A and B while it writes C) at every shape, configured as
    the lookup chain would configure it there; a test on a device it does not fit is skipped."""
    def direct(device, shape):
        found = choice.direct_config(device, shape)
        if found is None:
            pytest.skip("the direct kernel does not fit this device")
        return found[0]

    monkeypatch.setattr(api.CACHE, "choose", direct)


def stored_rung3_failing_to_launch(be: Any, results: Any, monkeypatch: pytest.MonkeyPatch
                                   ) -> list[int]:
    """A tuning database in `results` whose entry at 64 cubed is rung 3, which builds on `be`
    but fails at every launch, as a stored configuration broken on this device would; the
    packing kernels at every size. Returns the list each failed launch appends to."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(results))
    monkeypatch.setattr(choice, "crossover", choice.no_crossover)
    api.clear_caches()
    db = database.load(be.device)
    db.record(database.Entry(rung=3, shape=[64, 64, 64], backend=be.device.backend,
                             params={"TS": 16, "WPT": 4}, ms=1.0, gflops=1.0))
    db.save()
    api.clear_caches()
    rung3, prepare, tries = get_rung(3), be.prepare, []

    def bad_prepare(knl, gsize, lsize, args, slots):
        launch = prepare(knl, gsize, lsize, args, slots)
        if be.kernel_name(knl) != rung3.kernel:
            return launch

        def fail(buffers, queue, wait_for):
            tries.append(1)
            raise LaunchError("launch failed: made to fail by the test")
        return fail

    monkeypatch.setattr(be, "prepare", bad_prepare)
    return tries
