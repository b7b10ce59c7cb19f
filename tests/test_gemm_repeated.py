"""Repeated calls of one signature that take several launches (B packed, then the tiled kernel)
into a given C: the call keeps its scratch buffers between calls (`HotCall._chain`), so
every call must still read its own operands, never a pack another call left behind."""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np
import pytest
from forced import stored_rung3_failing_to_launch
from layouts import rand, reference

import clgemm
from clgemm.backends import KINDS
from clgemm.library import gemm as api
from clgemm.library import hot_call

PARAMS = dict(TSM=16, TSN=16, TSK=16, WPTM=4, WPTN=4, WIDTH=4, VWM=1, VWN=1, CACHE_A=1,
              CACHE_B=1)


def _close(got, want) -> bool:
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max()))
    return bool(np.isfinite(got).all() and np.abs(got - want).max() < 1e-4 * scale)


def _poisoned(be, kind, n):
    return kind.upload(be, np.full((n, n), np.nan, np.float32))


def _chain(be, forced_tiled, n):
    forced_tiled(be, PARAMS, False)  # C-ordered: B packed into BT, then the kernel
    kind = KINDS[be.name]
    return kind, np.random.default_rng(n), _poisoned(be, kind, n)


def test_a_repeated_call_of_several_launches_reads_its_own_operands(every_backend,
                                                                    forced_tiled):
    be = every_backend
    n = 64
    kind, rng, _ = _chain(be, forced_tiled, n)
    pairs = [(rand(rng, (n, n)), rand(rng, (n, n))) for _ in range(6)]
    for i, (x, y) in enumerate(pairs):
        dx, dy = kind.upload(be, x), kind.upload(be, y)
        out = clgemm.gemm(dx, dy, _poisoned(be, kind, n))  # a new C each time, poisoned
        be.synchronize()
        assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False)), i
    hot = list(api.CACHE.hot.values())
    assert hot and all(len(h.program.ready) >= 2 for h in hot)
    assert all(h.quick is not None and h.one_launch is None for h in hot)
    out = clgemm.gemm(dx, dy, dx)  # the same signature with C that is A: copied first
    be.synchronize()
    assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False))


@pytest.mark.parametrize("reads_b", [False, True], ids=["packs B", "one launch"])
def test_calls_of_one_signature_from_two_threads(every_backend, forced_tiled, reads_b):
    """Each call's pack and kernel are queued together, so two threads sharing the kept
    scratch each get their own product; and a thread that never made the device current
    itself takes the remembered call as well (CUDA: a context current for the launches)."""
    be = every_backend
    n = 64
    kind, rng, _ = _chain(be, forced_tiled, n)
    forced_tiled(be, PARAMS, reads_b)
    inputs = [(rand(rng, (n, n)), rand(rng, (n, n))) for _ in range(2)]
    dev = [(kind.upload(be, x), kind.upload(be, y)) for x, y in inputs]
    outs = [_poisoned(be, kind, n) for _ in inputs]
    clgemm.gemm(*dev[0], outs[0])  # the signature's program, before the threads
    errors: list[str] = []

    def work(i: int) -> None:
        try:
            for _ in range(20):
                clgemm.gemm(*dev[i], outs[i])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    be.synchronize()
    assert not errors
    for (x, y), out in zip(inputs, outs):
        assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False))


def test_kept_scratch_has_a_ceiling(every_backend, forced_tiled, monkeypatch):
    """Past the bytes all signatures may keep, a call of several launches takes its scratch
    from the pool each time, and is as right."""
    monkeypatch.setattr(hot_call, "KEPT_SCRATCH_BYTES", 0)
    be = every_backend
    n = 48
    kind, rng, c = _chain(be, forced_tiled, n)
    x, y = rand(rng, (n, n)), rand(rng, (n, n))
    dx, dy = kind.upload(be, x), kind.upload(be, y)
    for _ in range(3):
        out = clgemm.gemm(dx, dy, c)
    be.synchronize()
    assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False))
    assert all(h.quick is None for h in api.CACHE.hot.values())


def test_a_chain_queued_without_events_still_waits_for_the_caller(every_backend, forced_tiled):
    """On OpenCL only a repeated chain's last launch makes an event; its first still waits for
    what the caller names (here the operands' writes on another queue, held back by a user
    event), and C's event, the last launch's, stands for the whole chain."""
    be = every_backend
    if be.name != "opencl":
        pytest.skip("events are pyopencl's")
    import pyopencl as cl

    from clgemm.backends.opencl import prepared

    n = 64
    kind, rng, c = _chain(be, forced_tiled, n)
    x, y = rand(rng, (n, n)), rand(rng, (n, n))
    zeros = np.zeros((n, n), np.float32)
    dx, dy = kind.upload(be, zeros), kind.upload(be, zeros)
    clgemm.gemm(dx, dy, c)  # the signature's program
    be.synchronize()
    assert prepared.no_event_enqueue() is not None
    gate, other = cl.UserEvent(be.context), cl.CommandQueue(be.context)
    writes = [cl.enqueue_copy(other, d.data, h, wait_for=[gate], is_blocking=False)
              for d, h in ((dx, x), (dy, y))]
    c.fill(np.nan)
    out = clgemm.gemm(dx, dy, c, wait_for=[gate, *writes])
    assert out is c and len(c.events) == 1
    # Some implementations order commands on one buffer across queues by themselves (PoCL):
    # the gate alone shows the chain held back.
    done = cl.command_execution_status.COMPLETE
    until = time.monotonic() + 0.5
    while time.monotonic() < until:
        assert c.events[0].command_execution_status != done
        time.sleep(0.01)
    gate.set_status(done)
    assert _close(kind.download(c), reference(x, y, None, 1.0, 0.0, False, False))
    hot = list(api.CACHE.hot.values())
    assert hot and all(h.quick is not None and len(h.program.ready) >= 2 for h in hot)


@pytest.mark.parametrize("case", ["strided views", "out-of-order queue"])
def test_a_repeated_chain_on_strided_views_and_out_of_order_queues(every_backend, forced_tiled,
                                                                     case):
    """Repeated calls of several launches, each with new operands and C poisoned: on views of
    wider arrays (A and B with a leading dimension twice their width) and on an out-of-order
    queue, where no call may take the in-order chain whose launches follow each other unasked."""
    be = every_backend
    n = 64
    kind, rng, c = _chain(be, forced_tiled, n)
    if case == "out-of-order queue":
        if be.name != "opencl":
            pytest.skip("queues are OpenCL's")
        import pyopencl as cl
        import pyopencl.array as cla
        q = cl.CommandQueue(be.context, be.device.handle,
                            properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        put = lambda h: cla.to_device(q, h)  # noqa: E731
    else:
        put = lambda h: kind.upload(be, h)  # noqa: E731
    c = put(np.full((n, n), np.nan, np.float32))
    for i in range(5):
        x, y = rand(rng, (n, 2 * n)), rand(rng, (n, 2 * n))
        if case == "strided views":
            dx, dy = put(x)[:, :n], put(y)[:, :n]
        else:
            dx, dy = put(np.ascontiguousarray(x[:, :n])), put(np.ascontiguousarray(y[:, :n]))
        c.fill(np.float32(np.nan))
        assert clgemm.gemm(dx, dy, c) is c
        be.synchronize()
        want = reference(x[:, :n], y[:, :n], None, 1.0, 0.0, False, False)
        assert _close(kind.download(c), want), (case, i)
    hot = list(api.CACHE.hot.values())
    assert hot
    if case == "out-of-order queue":
        assert all(h.quick is None for h in hot)
    else:
        assert all(h.quick is not None and len(h.program.ready) >= 2 for h in hot)


@pytest.mark.no_shipped_tuning
def test_after_a_launch_fails_the_repeated_call_runs_the_next_choice(every_backend, tmp_path,
                                                                     monkeypatch):
    """A stored configuration that fails to launch is dropped and the call runs on the next
    choice; the call remembered for the signature is that choice's, so the repeated call on
    device arrays neither launches the dropped kernel again nor fails."""
    be = every_backend
    tries = stored_rung3_failing_to_launch(be, tmp_path, monkeypatch)
    kind, rng = KINDS[be.name], np.random.default_rng(10)
    assert api.choose_kernel(be.device, 64, 64, 64).rung == 3
    for call in range(3):
        x, y = rand(rng, (64, 64)), rand(rng, (64, 64))
        if call == 0:
            with pytest.warns(RuntimeWarning, match="rung 3 .* failed"):
                out = clgemm.gemm(kind.upload(be, x), kind.upload(be, y))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                out = clgemm.gemm(kind.upload(be, x), kind.upload(be, y))
        be.synchronize()
        assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False)), call
    assert len(tries) == 1 and api.CACHE.hot


def test_a_large_product_leaves_the_kept_scratch_to_small_ones(every_backend, forced_tiled,
                                                               monkeypatch):
    """A signature whose scratch is above the share one call may keep takes it from the pool,
    so that, called first, it does not use up what a small product's repeated call keeps: the
    small one still runs its launches with its scratch kept."""
    be = every_backend
    kind, rng, _ = _chain(be, forced_tiled, 32)
    sizes = {}
    for n in (32, 96):  # the scratch each signature keeps with nothing in the way
        x, y = kind.upload(be, rand(rng, (n, n))), kind.upload(be, rand(rng, (n, n)))
        clgemm.gemm(x, y, _poisoned(be, kind, n))
        hot = [h for h in api.CACHE.hot.values() if h.shape == (n, n)]
        assert len(hot) == 1 and hot[0].quick is not None
        sizes[n] = 4 * sum(hot[0].program.scratch)
    assert sizes[96] > sizes[32]
    api.CACHE.clear()
    be.synchronize()
    monkeypatch.setattr(hot_call, "_kept", [0])
    monkeypatch.setattr(hot_call, "KEPT_SCRATCH_BYTES", sizes[96])
    monkeypatch.setattr(hot_call, "KEPT_SCRATCH_PER_CALL", sizes[96] - 1)
    for n in (96, 32):  # the large one first
        x, y = rand(rng, (n, n)), rand(rng, (n, n))
        out = clgemm.gemm(kind.upload(be, x), kind.upload(be, y), _poisoned(be, kind, n))
        be.synchronize()
        assert _close(kind.download(out), reference(x, y, None, 1.0, 0.0, False, False)), n
    quick = {h.shape[0]: h.quick is not None for h in api.CACHE.hot.values()}
    assert quick == {96: False, 32: True}
