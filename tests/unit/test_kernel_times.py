"""bench --call's kernel column: the observed call queues behind calls still running on device
arrays, never right after the device has drained; on NumPy arrays nothing runs ahead of it."""

from __future__ import annotations

import contextlib

import pytest

from clgemm.measure import call_bench


class _Recorder:
    """A side, a backend and a call that write down what happens in which order."""

    def __init__(self, mode: str):
        self.mode, self.events = mode, []
        self.observing = False

    def sync(self) -> None:
        self.events.append("sync")

    def call(self) -> None:
        self.events.append("observed call" if self.observing else "call")

    @contextlib.contextmanager
    def observe(self):
        self.observing = True
        yield self  # the launch log: its times() are this recorder's
        self.observing = False

    def times(self) -> list[tuple[str, float]]:
        return [("pack", 0.5), ("gemm_tiled", 2.0)]


@pytest.mark.parametrize("mode", ["device", "numpy"])
def test_the_observed_call_follows_unobserved_ones_on_device_arrays(mode):
    rec = _Recorder(mode)
    main_ms, all_ms, launches = call_bench._kernel_times(rec, rec, rec.call, "gemm_tiled")
    assert (main_ms, all_ms, launches) == (2.0, 2.5, 2)
    warm = ["call"] * call_bench.WARM_CALLS if mode == "device" else []
    one_round = ["sync", *warm, "observed call", "sync"]
    assert rec.events == one_round * 5
    assert call_bench.WARM_CALLS >= 1
