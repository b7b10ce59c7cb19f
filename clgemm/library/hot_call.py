"""A call on device arrays whose signature was seen before: its checks, kernel, plan and
launches are all known, so what is left is to bind the arrays' buffers and queue the launches.

The signature (`clgemm.backends.registry.array_signature` of each array, and the other
arguments as given) fixes everything a call's checks and program depend on: shapes, strides,
offsets, the context or device, the queue. What it cannot fix is whether C shares memory with
A or B this time (the same signature fits a C that is a view of A and one that is not), so a
call whose program reads an operand while writing C measures that again, and one that finds a
different answer than its program was made for goes the whole way.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from clgemm.backends import Backend, DeviceArrays, Mat, PreparedLaunch
from clgemm.library.order import LaunchOrder
from clgemm.library.plan import aliases, copies
from clgemm.library.program import CallProgram


#: scratch bytes that repeated several-launch calls may keep between calls, over all their
#: signatures together: enough for the packs of products up to a few thousand on a side
KEPT_SCRATCH_BYTES = 256 << 20
#: the most one signature keeps: a product whose packs are larger runs long enough that taking
#: them from the pool is a small share of its call, and kept, one such product (a long K's packs
#: run to hundreds of MiB) would leave no room for the small ones whose calls the pool's time
#: decides (results/h100/shape-map)
KEPT_SCRATCH_PER_CALL = KEPT_SCRATCH_BYTES // 8
_kept = [0]
_kept_lock = threading.Lock()
#: the most operand bytes of a call whose buffers a repeated call holds to know them again as
#: apart from each other (`HotCall._quick_with`): the host-bound products, 512 cubed and below
ALIAS_MEMO_BYTES = 4 << 20


def _keep(nbytes: int) -> bool:
    """Whether `nbytes` more scratch may be kept, counted in if so."""
    with _kept_lock:
        if _kept[0] + nbytes > KEPT_SCRATCH_BYTES:
            return False
        _kept[0] += nbytes
        return True


def _give_back(nbytes: int) -> None:
    with _kept_lock:
        _kept[0] -= nbytes


def _buffers(bound: tuple, sources: list[Any]) -> list[Any]:
    """A launch's buffers: the call's A, B or C where its source is 0, 1 or 2, else the kept
    scratch buffer the source is."""
    return [bound[x] if isinstance(x, int) else x for x in sources]


def _moved_from(stream: Callable[[], Any] | None) -> Callable[[], bool] | None:
    """Whether the current stream (`Backend.current_stream`) is another than it is now."""
    if stream is None:
        return None
    kept = stream()
    return lambda: stream() != kept


def _unless(moved: Callable[[], bool], quick: Callable[..., Any]) -> Callable[..., Any]:
    """`quick`, or None (the whole way, with buffers of its own) once `moved` says the current
    stream is no longer the one its kept scratch buffers serve: two streams' calls at once
    would write them both."""
    def checked(a: Any, b: Any, c: Any, wait_for: Any) -> Any | None:
        return None if moved() else quick(a, b, c, wait_for)
    return checked


def pending(be: Backend, kind: DeviceArrays, wait_for: Any, *arrays: Any) -> list[Any]:
    """What a repeated call's first launch waits for: the caller's `wait_for` and, where the
    array library has them, the arrays' events."""
    waits = be.wait_list(wait_for) if wait_for is not None else []
    if kind.has_events:
        for x in arrays:
            waits += kind.events(x)
    return waits


@dataclass(frozen=True)
class HotCall:
    be: Backend
    kind: DeviceArrays
    program: CallProgram
    #: A, B and C as the program sees them (offsets, leading dimensions, transposes): B and A
    #: swapped where C is C-ordered
    a: Mat
    b: Mat
    c: Mat
    swap: bool
    #: the call gave C (else a new C-ordered array is made)
    c_given: bool
    shape: tuple[int, int]
    #: whether the answer to "does C share memory with A or B" can change the program
    check_alias: bool
    #: where every call of the signature runs on one queue with nothing to do first
    #: (`DeviceArrays.steady_queue`): that queue; else queue_for is asked each time
    steady: bool = False
    queue: Any = None
    #: whether the program reads A and B (`Plan.use_p`)
    use_p: bool = field(init=False, default=True)
    #: a host-bound product: operands of ALIAS_MEMO_BYTES or less, whose arrays a repeated
    #: call may hold to know them again (`_quick_with`, `library.same_call`)
    small: bool = field(init=False, default=False)
    #: the program's one prepared launch, and which of A, B and C (0, 1, 2) it takes, in order
    one_launch: PreparedLaunch | None = field(init=False, default=None)
    slot_index: tuple[int, ...] = field(init=False, default=())

    #: the call with its lookups done once (`_quick_with` into a given C, `_quick_new` into a
    #: new one), where its launches are prepared and its queue steady and in order; else None
    quick: Callable[[Any, Any, Any, Any], Any] | None = field(init=False, default=None)

    def __call__(self, a: Any, b: Any, c: Any, wait_for: Any) -> Any | None:
        """The call's result, or None where it must go the whole way."""
        quick = self.quick
        if quick is not None:
            return quick(a, b, c, wait_for)
        be, kind = self.be, self.kind
        with be.activate():
            named = (("a", a), ("b", b), ("c", c)) if self.c_given else (("a", a), ("b", b))
            waits = pending(be, kind, wait_for, *(x for _, x in named))
            queue = self.queue if self.steady else kind.queue_for(be, named)
            x, y = (b, a) if self.swap else (a, b)
            bx, by = (kind.kernel_arg(x), kind.kernel_arg(y)) if self.use_p else (None, None)
            if self.check_alias and self._may_share(a, b, c) and not self._same_alias(
                    bx, by, kind.kernel_arg(c)):
                return None
            return self._run(named, queue, waits, bx, by)

    def _run(self, named: tuple, queue: Any, waits: list[Any], bx: Any, by: Any) -> Any:
        """The program's launches in their order, into the given C or a new one."""
        be, kind = self.be, self.kind
        order = LaunchOrder(be, queue, waits)
        if self.c_given:
            result = named[2][1]
        else:
            order.pooled()
            result = kind.empty(be, named, self.shape)
        bc = kind.kernel_arg(result)
        with be.lock:
            self.program.run(order, bx, by, bc)
        kind.replace_events(result, order.last)
        return result

    def __post_init__(self) -> None:
        # The program has run once by now (the call that made this), so its launches are
        # prepared: where it is one launch that takes nothing from the pool, on an in-order
        # queue, a call queues that launch alone, with what it waits for.
        program, ready = self.program, self.program.ready
        object.__setattr__(self, "use_p", program.plan.use_p)
        object.__setattr__(self, "small", self._operand_bytes() <= ALIAS_MEMO_BYTES)
        if ready is None or not self.steady or not self.be.in_order(self.queue):
            return
        launches, moved = None, None
        if len(ready) == 1 and not program.scratch:
            object.__setattr__(self, "one_launch", ready[0])
            object.__setattr__(self, "slot_index", tuple("abc".index(str(slot.name))
                                                         for _, slot in program.slots[0]))
            launches = self._one_launch()
        elif (nbytes := 4 * sum(program.scratch)) <= KEPT_SCRATCH_PER_CALL and _keep(nbytes):
            # Several launches (packs, the kernel, a sum of slices): their scratch buffers
            # are kept for the next call of the signature rather than taken from the pool
            # each time. The calls queue on one in-order queue, each call's launches together
            # under the backend's lock, so a call's packs are written only after the call
            # before has read them.
            weakref.finalize(self, _give_back, nbytes)
            with self.be.activate():
                kept = [self.be.scratch(count, self.queue) for count in program.scratch]
                moved = _moved_from(self.be.current_stream())
            launches = self._chain(kept)
        if launches is not None:
            quick = self._quick_with(launches) if self.c_given else self._quick_new(launches)
            object.__setattr__(self, "quick", quick if moved is None else _unless(moved, quick))

    def _one_launch(self) -> Callable[[tuple, Any, list[Any]], Any]:
        """The one launch, given the buffers of A, B and C as the program sees them."""
        launch, slots = self.one_launch, self.slot_index
        assert launch is not None

        def queue_launches(bound: tuple, queue: Any, waits: list[Any]) -> Any:
            return launch([bound[i] for i in slots], queue, waits)
        return queue_launches

    def _chain(self, kept: list[Any]) -> Callable[[tuple, Any, list[Any]], Any]:
        """The program's launches with its scratch buffers kept: what a repeated call of a
        few launches costs on the host is then one launch's share each, where taking buffers
        from the pool and walking the program's slots each time had cost as much again."""
        ready = self.program.ready
        assert ready is not None
        # per launch, where each of its buffers comes from: the call's A, B, C (0, 1, 2) or a
        # kept scratch buffer (the buffer itself)
        sources = [[("abc".index(slot.name) if isinstance(slot.name, str) else kept[slot.name])
                    for _, slot in slots] for slots in self.program.slots]
        steps = list(zip(ready, sources))
        (last, last_src), before = steps[-1], steps[:-1]

        def queue_launches(bound: tuple, queue: Any, waits: list[Any]) -> Any:
            # On an in-order queue each launch follows the one before, so only the last one's
            # event is needed: the others are queued without one.
            for launch, src in before:
                launch.queue_only(_buffers(bound, src), queue, waits)
                waits = []
            return last(_buffers(bound, last_src), queue, waits)
        return queue_launches

    def _quick_new(self, queue_launches: Callable[[tuple, Any, list[Any]], Any]
                   ) -> Callable[[Any, Any, Any, Any], Any]:
        """A repeated call into a new C, with every attribute it needs looked up once, as
        `_quick_with` does for a given one: a new C shares memory with nothing, so nothing is
        measured, and its launches wait only for the operands and the caller."""
        be, kind, shape, swap = self.be, self.kind, self.shape, self.swap
        arg, settle, empty, has_events = (kind.kernel_arg, kind.replace_events, kind.empty,
                                          kind.has_events)
        queue, lock, active, activate = self.queue, be.lock, be.already_active(), be.activate

        def launch(a: Any, b: Any, waits: list[Any]) -> tuple[Any, Any]:
            c = empty(be, (("a", a), ("b", b)), shape)
            bound = (arg(b), arg(a), arg(c)) if swap else (arg(a), arg(b), arg(c))
            return c, queue_launches(bound, queue, waits)

        def quick(a: Any, b: Any, c: Any, wait_for: Any) -> Any:
            waits = (pending(be, kind, wait_for, a, b)
                     if has_events or wait_for is not None else [])
            with lock:
                if active is None or active():
                    c, event = launch(a, b, waits)
                else:
                    with activate():
                        c, event = launch(a, b, waits)
            if event is not None:
                settle(c, event)
            return c
        return quick

    def _quick_with(self, queue_launches: Callable[[tuple, Any, list[Any]], Any]
                    ) -> Callable[[Any, Any, Any, Any], Any]:
        """A repeated call into a given C that queues its launches with `queue_launches`
        (the buffers of A, B and C as the program sees them, the queue, what the first
        waits for), with every attribute it needs looked up once: a small product's call is
        host-bound, and each lookup, context manager and tuple it skips is a share of the
        microseconds the call costs. The launches are queued together under the backend's
        lock, so that two threads repeating one signature cannot interleave them."""
        be, kind = self.be, self.kind
        arg, settle, check_alias, swap = (kind.kernel_arg, kind.replace_events, self.check_alias,
                                          self.swap)
        queue, lock, active, activate = self.queue, be.lock, be.already_active(), be.activate
        may_share, same_alias, has_events = self._may_share, self._same_alias, kind.has_events
        # This call's last launch: on its in-order queue every later launch follows it anyway,
        # so where an array's events name it, it is left out of the wait list.
        last: list[Any] = [None]
        # The buffers last found to be allocations apart, held so that while the same ones come
        # again their identity stands for that answer (where a buffer's memory lies never
        # changes), rather than the driver being asked again: a share of a small product's call
        # that its launch does not need. Only small products hold theirs, so that no large
        # buffer outlives its arrays for this.
        apart: list[tuple | None] = [None]
        remember = check_alias and self.small

        def quick(a: Any, b: Any, c: Any, wait_for: Any) -> Any | None:
            bound = (arg(b), arg(a), arg(c)) if swap else (arg(a), arg(b), arg(c))
            if check_alias:
                seen = apart[0]
                if seen is None or not (seen[0] is bound[0] and seen[1] is bound[1]
                                        and seen[2] is bound[2]):
                    if may_share(a, b, c):
                        if not same_alias(*bound):
                            return None
                    elif remember:
                        apart[0] = bound
            waits = (pending(be, kind, wait_for, a, b, c)
                     if has_events or wait_for is not None else [])
            if waits and last[0] is not None:
                waits = [e for e in waits if e is not last[0]]
            with lock:
                if active is None or active():
                    event = queue_launches(bound, queue, waits)
                else:
                    with activate():
                        event = queue_launches(bound, queue, waits)
            if event is not None:
                # the first launch waited for all C's events, and the last followed it
                settle(c, event)
                last[0] = event
            return c
        return quick

    def _operand_bytes(self) -> int:
        """The bytes of A, B and C as the program reads and writes them."""
        p = self.program.plan
        return 4 * (p.m * p.k + p.k * p.n + p.m * p.n)

    def _may_share(self, a: Any, b: Any, c: Any) -> bool:
        """False where C is an allocation of its own, apart from A's and B's."""
        kind = self.kind
        mine, theirs = kind.allocation(c), (kind.allocation(a), kind.allocation(b))
        return mine is None or None in theirs or mine in theirs

    def _same_alias(self, bx: Any, by: Any, bc: Any) -> bool:
        p = self.program.plan
        now = aliases(self.kind, Mat(bx, self.a.offset, self.a.ld, self.a.trans),
                      Mat(by, self.b.offset, self.b.ld, self.b.trans),
                      Mat(bc, self.c.offset, self.c.ld, False), p.m, p.n, p.k)
        return copies(p, now) == copies(p, self.alias)

    @property
    def alias(self) -> tuple[bool, bool]:
        return self.program.alias
