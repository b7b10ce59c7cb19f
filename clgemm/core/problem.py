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
    #: how many products of M x N x K, stacked and done in one launch: a tune of a stack
    #: measures the tiles a stack wants, which one product alone (filling the device with
    #: small tiles) does not tell
    batch: int = 1

    def __post_init__(self):
        for name, v in zip(("M", "N", "K", "batch"), (self.m, self.n, self.k, self.batch)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise UsageError(f"size {name}={v!r} must be a positive integer")

    @property
    def flops(self) -> int:
        return 2 * self.m * self.n * self.k * self.batch

    @property
    def label(self) -> str:
        """MxNxK, or BATCHxMxNxK for a stack: as --shapes takes it and journals are named."""
        dims = "x".join(map(str, self.as_list()))
        return dims if self.batch == 1 else f"{self.batch}x{dims}"

    def dims(self) -> list[int]:
        """[M, N, K], or [BATCH, M, N, K] for a stack (`label`'s numbers)."""
        return self.as_list() if self.batch == 1 else [self.batch, *self.as_list()]

    @classmethod
    def of(cls, dims: "tuple[int, ...] | list[int]") -> "Problem":
        """The problem `dims()` describes."""
        if len(dims) == 3:
            return cls(dims[0], dims[1], dims[2])
        return cls(dims[1], dims[2], dims[3], batch=dims[0])

    def as_list(self) -> list[int]:
        return [self.m, self.n, self.k]

    def as_tuple(self) -> tuple[int, int, int]:
        return (self.m, self.n, self.k)

    def gflops(self, ms: float | None) -> float | None:
        return None if not ms else self.flops / (ms * 1e-3) / 1e9


_SIZE_ITEM = re.compile(r"^\s*(\d+)\s*(?:[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*)?$")
_STACK_ITEM = re.compile(r"^\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*$")


def parse_sizes(text: str, option: str = "--sizes", stacks: bool = False) -> list[Problem]:
    """'256,1000,4096x4096x128' -> problems; each item S (square) or MxNxK, and with `stacks`
    also BATCHxMxNxK (a stack of BATCH products), all positive."""
    problems: list[Problem] = []
    for item in text.split(","):
        stack = _STACK_ITEM.match(item) if stacks else None
        match = stack or _SIZE_ITEM.match(item)
        if not match:
            forms = "S, MxNxK or BATCHxMxNxK" if stacks else "S or MxNxK"
            raise UsageError(f"{option}: '{item.strip()}' is not {forms} (e.g. 1024 or "
                             f"4096x4096x128{' or 1000x64x64x64' if stacks else ''})")
        dims = [int(g) for g in match.groups() if g is not None]
        batch = dims.pop(0) if stack else 1
        m, n, k = dims * 3 if len(dims) == 1 else dims
        if min(m, n, k, batch) < 1:
            raise UsageError(f"{option}: '{item.strip()}' has a size below 1")
        p = Problem(m, n, k, batch)
        if p not in problems:
            problems.append(p)
    return problems
