"""Sizes refused before anything is allocated: the buffers of a ladder run against the device's
largest allocation and memory, the kernels' 32-bit indexes, and the host memory of the check."""

from __future__ import annotations

import dataclasses

import pytest

from clgemm.core import memory_fit
from clgemm.core.errors import UsageError
from clgemm.core.problem import Problem
from clgemm.measure.rung_runner import check_workspace, workspace_buffers
from clgemm.rungs import get_rung


def _configs(*numbers: int, **params) -> list:
    return [(get_rung(n), {**get_rung(n).defaults(), **params}) for n in numbers]


def test_buffers_follow_the_helpers_of_each_configuration():
    p = Problem(64, 32, 16)
    plain = dict(workspace_buffers(p, _configs(1)))
    assert plain == {"A": 64 * 16, "B": 16 * 32, "C": 64 * 32, "vendor BLAS's C": 64 * 32}
    panels = dict(workspace_buffers(p, _configs(5) + _configs(12, PANELS=1, CACHE_A=0, CACHE_B=0),
                                    vendor_c=False))
    tsm, tsn = get_rung(12).defaults()["TSM"], get_rung(12).defaults()["TSN"]
    assert panels["BT"] == 16 * 32  # shared by rung 5 and the tiled kernel
    assert panels[f"A panels of {tsm}"] == 64 * 16 and panels[f"B panels of {tsn}"] == 32 * 16
    assert "vendor BLAS's C" not in panels


def test_one_buffer_over_the_largest_allocation_is_named(device):
    small = dataclasses.replace(device, max_alloc_bytes=2**20)
    with pytest.raises(UsageError, match=r"^A needs 3\.81 MiB \(1000000 floats\) in one buffer; "
                                         r".* allows at most 1\.00 MiB per allocation"):
        check_workspace(small, Problem(1000, 1000, 1000), _configs(1))


def test_all_buffers_over_the_device_memory_are_listed(device):
    small = dataclasses.replace(device, global_mem_bytes=4 * 4 * 10**6)
    with pytest.raises(UsageError) as info:
        check_workspace(small, Problem(1000, 1000, 1000), _configs(10))
    text = str(info.value)
    assert text.startswith("M=1000 N=1000 K=1000 needs 19.07 MiB of device memory (A 3.81 MiB")
    assert "BT 3.81 MiB" in text and f"'{device.name}' has" in text


def test_more_elements_than_32_bit_indexes_reach(device):
    with pytest.raises(UsageError, match="A has 4000000000 elements, more than the kernels' "
                                         "32-bit indexing"):
        check_workspace(device, Problem(200000, 20, 20000), _configs(1))


def test_host_memory_of_the_reference(device, monkeypatch):
    monkeypatch.setattr(memory_fit, "host_available", lambda: 2**20)
    with pytest.raises(UsageError, match="checking M=256 N=256 K=256 against its float64 "
                                         "reference needs about .* of host memory; 1.00 MiB is "
                                         "available"):
        check_workspace(device, Problem(256, 256, 256), _configs(1))
