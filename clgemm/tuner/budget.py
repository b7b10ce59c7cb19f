"""How long a plain `clgemm tune` may run: the whole ladder within a few minutes, so that a new
device gets tuned at all. A GPU measures a configuration in milliseconds but compiles each in a
fraction of a second; a 2-core CPU compiles as slowly and runs each launch for longer, so it
gets more time."""

from __future__ import annotations

from typing import Any

#: minutes a plain `clgemm tune` takes at most, whole ladder and gemm()'s shapes
DEFAULT_MINUTES = {"GPU": 10, "CPU": 15}


def default_tune_minutes(device: Any) -> int:
    return DEFAULT_MINUTES.get(device.type, DEFAULT_MINUTES["GPU"])
