"""The size of one product, M x N x K: a value every layer speaks of (the runner, the model,
the bench, the tuner, the command line), so it sits below them all."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from clgemm.core.errors import UsageError


@dataclass(frozen=True)
class Problem:
    m: int
    n: int
    k: int

    def __post_init__(self):
        for name, v in zip("MNK", (self.m, self.n, self.k)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise UsageError(f"size {name}={v!r} must be a positive integer")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k

    def as_list(self) -> list[int]:
        return [self.m, self.n, self.k]

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    def gflops(self, ms: float | None) -> float | None:
        return None if not ms else self.flops / (ms * 1e-3) / 1e9


_SIZE_ITEM = re.compile(r"^\s*(\d+)\s*(?:[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*)?$")


def parse_sizes(text: str, option: str = "--sizes") -> list[Problem]:
    """'256,1000,4096x4096x128' -> problems; each item S (square) or MxNxK, all positive."""
    problems: list[Problem] = []
    for item in text.split(","):
        match = _SIZE_ITEM.match(item)
        if not match:
            raise UsageError(f"{option}: '{item.strip()}' is not S or MxNxK (e.g. 1024 or "
                             f"4096x4096x128)")
        dims = [int(g) for g in match.groups() if g is not None]
        m, n, k = dims * 3 if len(dims) == 1 else dims
        if min(m, n, k) < 1:
            raise UsageError(f"{option}: '{item.strip()}' has a size below 1")
        p = Problem(m, n, k)
        if p not in problems:
            problems.append(p)
    return problems
