"""A stored configuration tried once on its device before gemm() relies on it.

A tune checks each configuration against float64, but only where it ran: on that device, with
that driver and compiler, at the shape it tuned. gemm() runs a stored configuration at any
shape, on devices that only share the tuned one's family (a shipped database), and under
compilers the tune never met. A compiler that gets a kernel wrong does so silently, at some
shapes and not others, and on one host and not the next (results/xeon/skinny-pocl5.txt). So
before the first call that would run a stored configuration, the library runs it once at a
small product of the call's kind: each size above `KEEP` cut to `CUT` plus its remainder
modulo `CUT`, so that the trial has the call's partial blocks along each side and the same
alignments (a kernel built for operands that lie on whole vectors is built so for the trial
too, and serves both); the call's transposes, alpha and beta; C poisoned with NaN where beta is
0. The trial's kernel is built and launched in the call's form (`signatures.Form`: K in two
slices where the call splits it, B read where it lies where the call reads it so). A result off
the float64 reference drops the configuration for the rest of the process, as a failed build
does, and the call runs on the next choice. A repeated call never pays for this: only the first
program of each configuration in each form does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clgemm.core import accuracy
from clgemm.core.errors import ClgemmError

#: False: stored configurations run untried (for a program that counts the launches of a first
#: call as its own, or one that trusts its databases over a first call's time)
ENABLED = True
#: elements of C compared at random, beside its first and last rows and columns
SAMPLE = 2048
#: pairs of rows of op(A) and columns of op(B) multiplied at a time
_CHUNK = 512
#: sizes a trial keeps as the call has them
KEEP = 511
#: a longer size becomes CUT plus its remainder modulo CUT: a multiple of every tile, block
#: and vector width that is a power of two, so that what a size leaves over of each stays
CUT = 256


class WrongResultError(ClgemmError):
    """A configuration's kernel gave a result off the float64 reference on this device."""


@dataclass(frozen=True)
class TrialProduct:
    """One small product and its float64 answer; operands are stored column-major, tight."""

    m: int
    n: int
    k: int
    trans_a: bool
    trans_b: bool
    alpha: float
    beta: float
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray

    @property
    def lda(self) -> int:
        return self.a.shape[0]

    @property
    def ldb(self) -> int:
        return self.b.shape[0]

    def flat(self) -> list[np.ndarray]:
        """A, B and C as the column-major flat arrays the device buffers hold."""
        return [np.ascontiguousarray(x.ravel(order="F")) for x in (self.a, self.b, self.c)]

    def judge(self, got: np.ndarray, what: str) -> WrongResultError | None:
        """None if `got` (C as read back, flat) is the product; else the error that says how
        far off it is. Every element is looked at for NaN (unwritten: C is poisoned where beta
        is 0); the values of its first and last rows and columns and of `SAMPLE` more drawn at
        random are compared with float64 dot products. A whole float64 product would go
        through the host's BLAS, whose threads then spin for a while beside the device's own
        on a CPU (they did on the GPU machine's Xeon: results/h100/trial/), and a kernel wrong
        at all is wrong at its edges or at most of its elements."""
        result = np.asarray(got, np.float32).reshape(self.n, self.m).T
        holes = accuracy.unwritten_count(result)
        if holes:
            return self._wrong(what, f"{holes} of {result.size} elements unwritten")
        rows, cols = self._checked()
        op_a = self.a.T if self.trans_a else self.a
        op_b = self.b.T if self.trans_b else self.b
        want = np.empty(rows.size)
        for at in range(0, rows.size, _CHUNK):  # einsum: one thread, no BLAS
            part = slice(at, at + _CHUNK)
            want[part] = np.einsum("sk,sk->s", op_a[rows[part]].astype(np.float64),
                                   op_b[:, cols[part]].T.astype(np.float64))
        want *= np.float64(np.float32(self.alpha))
        if self.beta != 0:
            want += np.float64(np.float32(self.beta)) * self.c[rows, cols]
        err = accuracy.relative_error(result[rows, cols], want)
        if err <= accuracy.TOLERANCE:
            return None
        return self._wrong(what, f"relative error {err:.1e}")

    def _checked(self) -> tuple[np.ndarray, np.ndarray]:
        """The (row, column) pairs whose values are compared."""
        m, n = self.m, self.n
        i, j = np.arange(m), np.arange(n)
        rng = np.random.default_rng(m * n)
        rows = np.concatenate([i, i, np.zeros(n, int), np.full(n, m - 1),
                               rng.integers(0, m, SAMPLE)])
        cols = np.concatenate([np.zeros(m, int), np.full(m, n - 1), j, j,
                               rng.integers(0, n, SAMPLE)])
        return rows, cols

    def _wrong(self, what: str, how: str) -> WrongResultError:
        return WrongResultError(f"{what} gave a wrong result at {self.m}x{self.n}x{self.k} "
                                f"({how})")


def trial_sizes(m: int, n: int, k: int,
                multiples: tuple[int, int, int] = (1, 1, 1)) -> tuple[int, int, int]:
    """The trial's sizes for a call of M x N x K: each above `KEEP` cut to `CUT` plus its
    remainder, unless the cut would leave a multiple the kernel needs of that size (a tile
    that is not a power of two), which keeps the size whole."""
    def cut(side: int, multiple: int) -> int:
        short = CUT + side % CUT
        return short if side > KEEP and short % multiple == side % multiple else side
    tm, tn, tk = (cut(side, multiple) for side, multiple in zip((m, n, k), multiples))
    return tm, tn, tk


def trial_for(m: int, n: int, k: int, trans_a: bool, trans_b: bool, alpha: float,
              beta: float, multiples: tuple[int, int, int] = (1, 1, 1), salt: int = 0,
              split: int = 1) -> TrialProduct:
    """The trial of a call of M x N x K with these transposes and scalars (`trial_sizes`);
    `salt` draws other operands of the same sizes, for a stack's second product. A call that
    splits K into `split` slices is tried on two slices, each of its slices' depth cut as a
    size is."""
    tm, tn, tk = trial_sizes(m, n, k, multiples)
    if split > 1:
        tk = 2 * trial_sizes(1, 1, k // split, multiples)[2]
    rng = np.random.default_rng((tm * 65_537 + tn * 257 + tk, salt))

    def stored(rows: int, cols: int) -> np.ndarray:
        return np.asfortranarray(rng.standard_normal((rows, cols), dtype=np.float32))

    a = stored(tk, tm) if trans_a else stored(tm, tk)
    b = stored(tn, tk) if trans_b else stored(tk, tn)
    c = stored(tm, tn) if beta != 0 else np.full((tm, tn), np.nan, np.float32, order="F")
    return TrialProduct(tm, tn, tk, trans_a, trans_b, alpha, beta, a, b, c)
