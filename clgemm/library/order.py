"""The order of one call's launches on its queue, and the buffers it takes from the pool."""

from __future__ import annotations

from typing import Any

from clgemm.backends import Backend, PreparedLaunch


class LaunchOrder:
    """The order of one call's launches on its queue.

    The first launch waits for the events the call was given: the operands' pending work (a
    pyopencl array's `.events`) and the caller's `wait_for`. On an in-order queue the later
    launches follow by queue order alone; on an out-of-order queue each waits for the one before
    (pack, panels, rung, epilogue run as a chain), and `last` is the event whose completion
    means C is written.

    Buffers from the pool are the other hazard of an out-of-order queue: a buffer handed back
    (a scratch buffer of an earlier call, an output the caller dropped) may still be read by
    work queued before, which the pool does not know of. Tracking every reader is not possible
    (the caller's own kernels read gemm()'s outputs), so the first time a call takes a buffer from the
    pool on such a queue it queues a marker, which completes when everything queued before it
    has, and its launches wait for that too. This orders only the call's own work after the
    earlier work, not the caller's later work; calls that take nothing from the pool (the
    direct kernel into a given C) and in-order queues need no marker."""

    def __init__(self, backend: Backend, queue: Any, wait_for: list[Any]):
        self.backend = backend
        self.queue = queue
        self.in_order = backend.in_order(queue)
        self.marked = self.in_order
        self.wait = wait_for
        #: the event of the last launch queued, if the backend has events
        self.last: Any = None

    def pooled(self) -> None:
        """Called before a buffer is taken from the pool for this call's launches to write."""
        if not self.marked:
            self.marked = True
            marker = self.backend.marker(self.queue)
            if marker is not None:
                self.wait = [*self.wait, marker]

    def scratch(self, count: int) -> Any:
        self.pooled()
        return self.backend.scratch(count, self.queue)

    def enqueue(self, kernel: Any, global_size: Any, local_size: Any, args: list) -> None:
        self._queued(self.backend.enqueue(kernel, global_size, local_size, args, self.queue,
                                          wait_for=self.wait or None))

    def copy(self, dst: Any, src: Any, nbytes: int) -> None:
        """Queue a copy of `src`'s first `nbytes` bytes into `dst`, ordered as a launch."""
        self._queued(self.backend.copy_buffer(dst, src, nbytes, self.queue,
                                              self.wait or None))

    def run(self, launch: PreparedLaunch, buffers: list) -> None:
        """Queue a prepared launch on the call's buffers, ordered as `enqueue` orders one."""
        self._queued(launch(buffers, self.queue, self.wait))

    def _queued(self, event: Any) -> None:
        """The next launch waits for this one where queue order does not say it."""
        self.last = event
        self.wait = [event] if event is not None and not self.in_order else []
