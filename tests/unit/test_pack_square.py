"""The side of the panels' pack squares follows the device's vectors on a CPU."""

from __future__ import annotations

import dataclasses

import pytest

from clgemm.configs.launch import PACK_SUB, pack_square
from made_up import GPU


def _cpu(name: str):
    return dataclasses.replace(GPU, name=name, type="CPU", compute_units=2)


@pytest.mark.parametrize("name, side", [
    ("pthread-haswell-AMD EPYC", 8),
    ("pthread-skylake-avx512-Intel(R) Xeon(R) Processor", 16),
    ("cpu-skylake-avx512-Intel(R) Xeon(R) Processor", 16),
    ("pthread-znver4-AMD EPYC", 16),
    ("a CPU no table knows", 8),
])
def test_a_cpu_packs_in_squares_of_its_vector(name: str, side: int) -> None:
    assert pack_square(_cpu(name)) == side


def test_other_devices_keep_the_squares_of_sixteen() -> None:
    assert pack_square(GPU) == PACK_SUB == 16
