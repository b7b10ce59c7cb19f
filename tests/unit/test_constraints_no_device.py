"""Constraints asked without a device: those on the parameters alone are judged, those that read
the device wait until one is known."""

from __future__ import annotations

from clgemm.devices.limits import DeviceLimits
from clgemm.rungs import get_rung
from clgemm.rungs.base import STAGES
from clgemm.rungs.direct import CPU_DEFAULTS, DIRECT

GPU = DeviceLimits(device_type="GPU")


def test_device_heuristics_wait_for_a_device():
    """The CPU defaults break a GPU heuristic; with no device known nothing says they do."""
    assert DIRECT.first_violation(CPU_DEFAULTS, GPU, stages=STAGES) is not None
    assert DIRECT.first_violation(CPU_DEFAULTS, None, stages=STAGES) is None
    tiled = get_rung(12)
    uncached = {**tiled.defaults(), "CACHE_A": 0, "CACHE_B": 0}
    assert tiled.first_violation(uncached, GPU, stages=("heuristic",)) is not None
    assert tiled.first_violation(uncached, None, stages=("heuristic",)) is None


def test_parameter_checks_need_no_device():
    """A set the tiles cannot divide is refused with or without a device, by the same name."""
    broken = {**DIRECT.defaults(), "WPTM": 3}
    with_device = DIRECT.first_violation(broken, GPU, stages=STAGES)
    without = DIRECT.first_violation(broken, None, stages=STAGES)
    assert with_device is not None and without is not None
    assert without.stage == "divisibility" and without.name == with_device.name
    assert not without.holds_on(broken, None)
