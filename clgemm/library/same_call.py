"""A call repeated on the very arrays of the call before it, found without making its key.

A repeated call's key (`gemm._call_key`) is the largest share of what a small product's call
costs on the host beside its launch: every part of each array's signature read and a tuple of
tuples built and hashed. Where a loop calls gemm() on the same arrays again and again, those
arrays are the same objects each time, and each part of their signature is an attribute the
array holds: while every one is still what it was (`DeviceArrays.same_basis`), the key would
come out as before, so the call it found then is the call now.

Only the arrays of small products are held for this (operands of `ALIAS_MEMO_BYTES` or less,
the host-bound calls): those of the last such call, and of the last one repeated this way. A
view holds the array it views, so a small view of a large array keeps that alive until other
calls take its place or the caches are cleared, as the buffers `HotCall._quick_with` holds do.

A call on other arrays (a new C each time, a loop over views) takes the key's way and only
takes the last call's place; its bases are taken only when it repeats the call before on the
same arrays, so such loops pay no more than a few identity checks and a tuple.
"""

from __future__ import annotations

from typing import Any

from clgemm.library.hot_call import HotCall
from clgemm.library.hot_stack import HotStack


class SameCall:
    """The last call found by its key on small device arrays, and the one before it."""

    __slots__ = ("seen", "memo")

    def __init__(self) -> None:
        #: (A, B, C, the hot call) of the last call found by its key
        self.seen: tuple | None = None
        #: A, B, C, alpha, beta, the flags as given, the hot call, its arrays' kind and each
        #: array's basis: a call on these, still as they were, is that hot call
        self.memo: tuple | None = None

    def forget(self) -> None:
        self.seen = self.memo = None

    def find(self, a: Any, b: Any, c: Any, alpha: Any, beta: Any, trans_a: Any,
             trans_b: Any, device: Any, backend: Any) -> HotCall | HotStack | None:
        """The hot call of a call on the remembered arrays, scalars and flags, each the very
        object it was and each array still holding what its signature was made of; else None.
        Identity stands for equality here: a float made anew each call only misses. A call
        that names a device or backend has no key, and is never found here either."""
        m = self.memo
        if (m is None or a is not m[0] or b is not m[1] or c is not m[2] or alpha is not m[3]
                or beta is not m[4] or trans_a is not m[5] or trans_b is not m[6]
                or device is not None or backend is not None):
            return None
        same, basis = m[8].same_basis, m[9]
        if same(a, basis[0]) and same(b, basis[1]) and (c is None or same(c, basis[2])):
            hot: HotCall | HotStack = m[7]
            return hot
        return None

    def ran(self, a: Any, b: Any, c: Any, alpha: Any, beta: Any, trans_a: Any, trans_b: Any,
            hot: HotCall | HotStack) -> None:
        """A call whose key found `hot` has run it: where the call before found the same on the
        same arrays, this call's arrays and scalars are remembered with their bases, taken
        now, with nothing run since the key was made but the call's own launches."""
        if not hot.small:
            return
        seen = self.seen
        if (seen is not None and seen[3] is hot and seen[0] is a and seen[1] is b
                and seen[2] is c):
            kind = hot.kind
            basis = (kind.basis(a), kind.basis(b), None if c is None else kind.basis(c))
            self.memo = (a, b, c, alpha, beta, trans_a, trans_b, hot, kind, basis)
        else:
            self.seen = (a, b, c, hot)
