"""A stacked call on device arrays whose signature was seen before: the stack's launches (one of
the direct kernel, or a pack and one of the tiled kernel) are prepared, so a call binds the
arrays' buffers and queues them.

The signature fixes the batch, every stride and offset and the queue; what it cannot fix is
whether C's products overlap A's or B's this time, which the stacked call refuses, so that is
measured again on every call (`refuse`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from clgemm.backends import Backend, DeviceArrays
from clgemm.library.hot_call import pending
from clgemm.library.order import LaunchOrder
from clgemm.library.program import CallProgram


@dataclass(frozen=True)
class HotStack:
    be: Backend
    kind: DeviceArrays
    program: CallProgram
    #: which array each buffer argument of the launch is, in order ("b", "a", "c" where C is
    #: C-ordered and the operands swap)
    slot_names: tuple[str, ...]
    #: the call gave C (else a new one of `shape` is made)
    c_given: bool
    shape: tuple[int, ...]
    #: the queue every call of the signature runs on (an in-order one)
    queue: Any
    #: raises where C shares memory with A or B, given the launch's buffers; None where C is new
    refuse: Callable[..., None] | None
    #: never a product whose arrays `library.same_call` holds: a stack's arrays run to many
    #: megabytes, and its call's key is a small share of its launch
    small: bool = field(init=False, default=False)

    def __call__(self, a: Any, b: Any, c: Any, wait_for: Any) -> Any:
        be, kind = self.be, self.kind
        with be.activate():
            named = (("a", a), ("b", b), ("c", c)) if self.c_given else (("a", a), ("b", b))
            waits = pending(be, kind, wait_for, *(x for _, x in named))
            if not self.c_given:
                c = kind.empty(be, named, self.shape)
            arrays = {"a": a, "b": b, "c": c}
            buffers = [kind.kernel_arg(arrays[name]) for name in self.slot_names]
            if self.refuse is not None:
                self.refuse(*buffers)
            ready = self.program.ready
            with be.lock:
                if ready is not None and len(ready) == 1 and not self.program.scratch:
                    event = ready[0](buffers, self.queue, waits)  # one launch, nothing pooled
                else:
                    order = LaunchOrder(be, self.queue, waits)
                    self.program.run(order, *buffers)
                    event = order.last
            if event is not None:  # the launches waited for all C's events
                kind.replace_events(c, event)
        return c
