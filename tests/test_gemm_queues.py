"""gemm() and gemm_buffers() in the order the caller's queue or stream gives.

OpenCL: the launches wait for the operands' pending events and for `wait_for`, the result's
`.events` carry the last launch, and on an out-of-order queue every launch waits for the one
before and for the work that may still use a pooled buffer. CUDA: everything is queued on the
current stream, a non-default one included. Checked against a float64 product, C poisoned with
NaN first where it is an output.
"""

from __future__ import annotations

import time

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
import pytest
from layouts import rand, reference

import clgemm
from clgemm.backends import KINDS
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.library import trial
from clgemm.library.gemm import clear_caches
from clgemm.rungs.tiled import CPU_IN_PLACE, CPU_MICRO_KERNEL, TILED

OUT_OF_ORDER = cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
COMPLETE = cl.command_execution_status.COMPLETE


def _close(got, want) -> bool:
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max()))
    return bool(np.isfinite(got).all() and np.abs(got - want).max() < 1e-4 * scale)


def _opencl_only(be) -> None:
    if be.name != "opencl":
        pytest.skip("OpenCL queues and events; CUDA has test_non_default_stream")


def _queue(be, out_of_order: bool):
    return cl.CommandQueue(be.context, be.device.handle,
                           properties=OUT_OF_ORDER if out_of_order else 0)


@pytest.mark.parametrize("size", [256, 300])
def test_out_of_order_queue(every_backend, size):
    """Ten tries of each kind of call on an out-of-order queue: a new device array, a poisoned
    device C, a NumPy C, and gemm_buffers through the packed path (rung 5: packs, rung,
    epilogue). Before the launches were ordered by events some of them read unfinished work."""
    be = every_backend
    _opencl_only(be)
    q = _queue(be, True)
    rng = np.random.default_rng(size)
    a, b = rand(rng, (size, size)), rand(rng, (size, size))
    want = reference(a, b, None, 1.0, 0.0, False, False)
    da, db = cla.to_device(q, a), cla.to_device(q, b)
    dc = cla.empty(q, (size, size), np.float32)
    bc = cl.Buffer(be.context, cl.mem_flags.READ_WRITE, size * size * 4)
    for i in range(10):
        assert _close(clgemm.gemm(da, db).get(), want), ("new array", i)
        dc.fill(np.float32(np.nan))
        assert clgemm.gemm(da, db, dc) is dc
        assert _close(dc.get(), want), ("device c", i)
        host_c = np.full((size, size), np.nan, np.float32)
        clgemm.gemm(da, db, host_c)
        assert _close(host_c, want), ("numpy c", i)
        cl.enqueue_fill_buffer(q, bc, np.float32(np.nan), 0, bc.size).wait()
        last = clgemm.gemm_buffers(size, size, size, da.base_data, db.base_data, bc,
                                   order="C", queue=q, rung=5)
        got = np.empty((size, size), np.float32)
        cl.enqueue_copy(q, got, bc, wait_for=[last])
        assert _close(got, want), ("gemm_buffers", i)


def test_repeated_calls_on_two_queues(every_backend):
    """B on a second queue, written there without waiting before each call: every call, the
    repeated ones too, must finish that queue before its kernel reads B."""
    be = every_backend
    _opencl_only(be)
    q1, q2 = _queue(be, False), _queue(be, False)
    rng = np.random.default_rng(9)
    a = rand(rng, (96, 80))
    da, dc = cla.to_device(q1, a), cla.empty(q1, (96, 112), np.float32)
    db = cla.empty(q2, (80, 112), np.float32)
    for i in range(4):
        b = rand(rng, (80, 112))
        dc.fill(np.float32(np.nan))
        cl.enqueue_copy(q2, db.base_data, b, is_blocking=False)
        assert clgemm.gemm(da, db, dc) is dc
        assert _close(dc.get(), reference(a, b, None, 1.0, 0.0, False, False)), i


def _held_back(be, q, ue, entry: str, m: int, n: int, k: int):
    """Make one call whose operands' work is held back by the user event `ue`; returns the
    poisoned C (an array), the call's last event, and the expected result. The same call runs
    once before, not held back: NVIDIA's OpenCL (driver 580) crashed when kernels that had never
    run were first launched behind a user event, which is no matter of gemm's ordering."""
    rng = np.random.default_rng(m + n + k)
    a, b = rand(rng, (m, k)), rand(rng, (k, n))
    da, db = cla.to_device(q, a), cla.to_device(q, b)
    dc = cla.empty(q, (m, n), np.float32)
    want = reference(a, b, None, 1.0, 0.0, False, False)

    def call(hold) -> object:
        dc.fill(np.float32(np.nan))
        dc.finish()
        if entry == "array events":
            if hold is not None:
                da.add_event(hold)
            assert clgemm.gemm(da, db, dc) is dc
            return dc.events[-1] if dc.events else None
        if entry == "wait_for":
            clgemm.gemm(da, db, dc, wait_for=None if hold is None else [hold])
            return dc.events[-1] if dc.events else None
        # the packed path, forced: packs, rung and epilogue must all wait (with panels, the
        # one launch that packs both operands, then the rung)
        forced = {"rung": 12, "params": CPU_MICRO_KERNEL} if entry == "panels" else {"rung": 5}
        return clgemm.gemm_buffers(m, n, k, da.base_data, db.base_data, dc.base_data,
                                   order="C", queue=q, wait_for=None if hold is None else [hold],
                                   **forced)

    call(None)
    q.finish()
    return dc, call(ue), want


@pytest.mark.parametrize("entry", ["array events", "wait_for", "gemm_buffers", "panels"])
@pytest.mark.parametrize("out_of_order", [False, True], ids=["in-order", "out-of-order"])
def test_nothing_runs_before_the_events_it_waits_for(every_backend, out_of_order, entry):
    """A user event not yet complete holds the call back: its last event stays incomplete and
    C, read through another queue, still holds its poison until the event is set; then C is
    right. On an out-of-order queue the later launches would otherwise not wait either."""
    be = every_backend
    _opencl_only(be)
    q, other = _queue(be, out_of_order), _queue(be, False)
    ue = cl.UserEvent(be.context)
    try:
        dc, last, want = _held_back(be, q, ue, entry, 70, 90, 50)
        assert last is not None, "the call's last event is not exposed"
        _held_poisoned(q, other, last, dc)
    finally:
        ue.set_status(COMPLETE)
    last.wait()
    assert _close(dc.get(), want)


def _held_poisoned(q, other, last, dc) -> None:
    """The call's last launch, queued on `q`, has not run: its event is incomplete and C, read
    through `other`, still holds its poison."""
    q.flush()
    time.sleep(0.3)
    assert last.command_execution_status != COMPLETE
    seen = np.empty(dc.shape, np.float32)
    cl.enqueue_copy(other, seen, dc.base_data)
    assert np.isnan(seen).all(), "C was written before the event it waits for"


def _recording(be, monkeypatch) -> list[tuple[list, object]]:
    """Every launch the backend queues from now on, as (its wait list, its event): those of
    `enqueue` and those of the launches it prepares for a call program (made anew: the
    programs remembered so far are dropped). The trial of a stored configuration
    (clgemm/library/trial.py) would queue its own launches on the backend's queue within the
    first call: it is left out, so that the launches recorded are the call's."""
    monkeypatch.setattr(trial, "ENABLED", False)
    launches: list[tuple[list, object]] = []
    enqueue, prepare = be.enqueue, be.prepare

    def record(kernel, gsize, lsize, args, queue=None, wait_for=None):
        event = enqueue(kernel, gsize, lsize, args, queue, wait_for)
        launches.append((list(wait_for or []), event))
        return event

    def prepared(*args):
        launch = prepare(*args)

        def run(buffers, queue, wait_for):
            event = launch(buffers, queue, wait_for)
            launches.append((list(wait_for or []), event))
            return event
        return run

    clear_caches()
    monkeypatch.setattr(be, "enqueue", record)
    monkeypatch.setattr(be, "prepare", prepared)
    return launches


def _is_marker(event) -> bool:
    return event.command_type == cl.command_type.MARKER


def test_out_of_order_launches_form_a_chain(every_backend, monkeypatch):
    """On an out-of-order queue the first launch waits for what it was given and for a marker
    (scratch buffers come from the pool), each later one for the one before, and the call hands
    back the last; on an in-order queue only the first waits, and for no marker. A call that
    takes nothing from the pool (the direct kernel into a given C) queues no marker."""
    be = every_backend
    _opencl_only(be)
    m, n, k = 70, 90, 50
    rng = np.random.default_rng(3)
    for out_of_order in (True, False):
        q = _queue(be, out_of_order)
        a, b = rand(rng, (m, k)), rand(rng, (k, n))
        da, db = cla.to_device(q, a), cla.to_device(q, b)
        dc = cla.empty(q, (m, n), np.float32)
        given = cl.UserEvent(be.context)
        given.set_status(COMPLETE)
        launches = _recording(be, monkeypatch)
        last = clgemm.gemm_buffers(m, n, k, da.base_data, db.base_data, dc.base_data,
                                   order="C", queue=q, wait_for=[given], rung=5)
        monkeypatch.undo()
        assert len(launches) >= 3  # packs, rung, epilogue
        first_wait = launches[0][0]
        assert given in first_wait
        assert any(_is_marker(e) for e in first_wait) == out_of_order
        for (wait, _), (_, before) in zip(launches[1:], launches):
            assert wait == ([before] if out_of_order else [])
        assert last == launches[-1][1]
        q.finish()
        assert _close(dc.get(), reference(a, b, None, 1.0, 0.0, False, False))

        launches = _recording(be, monkeypatch)
        out = clgemm.gemm(da, db)  # a new array from the pool
        monkeypatch.undo()
        assert out.events[-1] == launches[-1][1]
        assert any(_is_marker(e) for e in launches[0][0]) == out_of_order
        q.finish()

    # the direct kernel into a given C takes nothing from the pool: no marker
    q = _queue(be, True)
    small = [cla.to_device(q, rand(rng, (8, 8))) for _ in range(3)]
    launches = _recording(be, monkeypatch)
    clgemm.gemm(*small)
    monkeypatch.undo()
    if len(launches) == 1:  # the direct kernel was chosen
        assert not any(_is_marker(e) for e in launches[0][0])
    q.finish()


def test_wait_for_is_checked(every_backend):
    be = every_backend
    a = np.ones((4, 4), np.float32)
    for bad, needle in [(5, "wait_for must be a list"), (["x"], r"wait_for\[0\] must be")]:
        with pytest.raises(ArgumentTypeError, match=needle):
            clgemm.gemm(a, a, backend=be, wait_for=bad)
    if be.name == "opencl":
        elsewhere = cl.UserEvent(cl.Context([be.device.handle]))
        with pytest.raises(UsageError, match="another OpenCL context"):
            clgemm.gemm(a, a, backend=be, wait_for=[elsewhere])
        elsewhere.set_status(COMPLETE)


@pytest.mark.cuda
def test_non_default_stream(every_backend):
    """On a non-blocking stream the call queues on that stream: ordered after the work that
    makes its operands there (a slow product first, so that a launch on another stream would
    read them unwritten), and right once that stream alone is synchronised."""
    be = every_backend
    if be.name != "cuda":
        pytest.skip("CUDA streams")
    cp = pytest.importorskip("cupy")
    with cp.cuda.Device(be.device.handle):  # this backend's GPU, of several
        kind = KINDS["cuda"]
        rng = np.random.default_rng(9)
        big = cp.asarray(rand(rng, (4096, 4096)))
        for size in (256, 300):
            a, b = rand(rng, (size, size)), rand(rng, (size, size))
            want = reference(a, b, None, 1.0, 0.0, False, False)
            for i in range(10):
                stream = cp.cuda.Stream(non_blocking=True)
                with stream:
                    cp.matmul(big, big)
                    da = cp.asarray(a) * 1.0
                    db = cp.asarray(b) + 0.0
                    dc = cp.full((size, size), cp.nan, dtype=cp.float32)
                    out = clgemm.gemm(da, db)
                    clgemm.gemm(da, db, out=dc)
                    flat = cp.full(size * size, cp.nan, dtype=cp.float32)
                    clgemm.gemm_buffers(size, size, size, da.ravel(), db.ravel(), flat, order="C",
                                        rung=5)
                stream.synchronize()
                assert _close(kind.download(out), want), (size, i, "new array")
                assert _close(kind.download(dc), want), (size, i, "out")
                assert _close(kind.download(flat).reshape(size, size), want), (size, i, "buffers")
        # wait_for: CUDA events recorded on another stream
        other = cp.cuda.Stream(non_blocking=True)
        with other:
            cp.matmul(big, big)
            da = cp.asarray(a) * 1.0
            ready = other.record()
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            out = clgemm.gemm(da, cp.asarray(b), wait_for=[ready])
        stream.synchronize()
        assert _close(kind.download(out), want)


def test_kept_buffers_serve_only_their_stream(every_backend, split_call_watched):
    """A call of several launches (here K in slices: partial products, then their sum) keeps
    its scratch buffers for the next call of its signature, on the stream it was made on
    alone: the same signature on another stream takes buffers of its own, so that two streams'
    calls at once cannot write one buffer; right on both."""
    be = every_backend
    if be.name != "cuda":
        pytest.skip("CUDA streams")
    cp = pytest.importorskip("cupy")
    a, b, want, (tn, tm), taken = split_call_watched(be, 41)
    with cp.cuda.Device(be.device.handle):  # the arrays on this backend's GPU, of several
        first, second = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
        da, db = cp.asarray(a), cp.asarray(b)
        for stream, name in [(first, "first"), (first, "first again"), (first, "kept"),
                             (second, "other stream")]:
            taken.clear()
            with stream:
                dc = cp.full((tn, tm), cp.nan, dtype=cp.float32)
                clgemm.gemm(da, db, dc)
            stream.synchronize()
            assert _close(dc.get(), want), name
            if name == "kept":
                assert not taken, "a repeated call on its stream takes nothing from the pool"
            if name == "other stream":
                assert taken, "on another stream the call takes buffers of its own"
    clear_caches()


def test_a_repeated_call_leaves_c_one_event_and_still_waits(every_backend):
    """Repeated into one C, a call leaves C's events at its last launch alone (which waited for
    all the others), so the list does not grow; an event someone else puts on C afterwards
    still holds the next call back, read through another queue as C's poison."""
    be = every_backend
    _opencl_only(be)
    q, other = _queue(be, False), _queue(be, False)
    rng = np.random.default_rng(23)
    a, b = rand(rng, (64, 48)), rand(rng, (48, 40))
    want = reference(a, b, None, 1.0, 0.0, False, False)
    da, db = cla.to_device(q, a), cla.to_device(q, b)
    dc = cla.empty(q, (64, 40), np.float32)
    for _ in range(20):
        assert clgemm.gemm(da, db, dc) is dc
    assert len(dc.events) == 1
    assert _close(dc.get(), want)
    dc.fill(np.float32(np.nan))
    dc.finish()
    ue = cl.UserEvent(be.context)
    dc.add_event(ue)
    try:
        clgemm.gemm(da, db, dc)
        last = dc.events[-1]
        _held_poisoned(q, other, last, dc)
    finally:
        ue.set_status(COMPLETE)
    last.wait()
    assert dc.events == [last]
    assert _close(dc.get(), want)


@pytest.mark.parametrize("form", [CPU_IN_PLACE, TILED.forms["self-packing"]],
                         ids=["in-place", "self-packing"])
def test_the_form_in_place_on_an_out_of_order_queue(every_backend, forced_tiled, form):
    """The tiled kernel reading every operand where it lies (one launch that writes C itself;
    or the form that copies its own blocks of them) on an out-of-order queue, ten tries each: a
    new array, a poisoned C, C that is A (A read as it was), and a view of A with a wider
    leading dimension (packed first); right every time."""
    be = every_backend
    _opencl_only(be)
    forced_tiled(be, form, pays=False)
    q = _queue(be, True)
    size = 256
    rng = np.random.default_rng(43)
    a, b = rand(rng, (size, size)), rand(rng, (size, size))
    wide = rand(rng, (size, 2 * size))
    want = reference(a, b, None, 1.0, 0.0, False, False)
    da, db, dwide = cla.to_device(q, a), cla.to_device(q, b), cla.to_device(q, wide)
    dc = cla.empty(q, (size, size), np.float32)
    for i in range(10):
        assert _close(clgemm.gemm(da, db).get(), want), ("new array", i)
        dc.fill(np.float32(np.nan))
        assert clgemm.gemm(da, db, dc) is dc
        assert _close(dc.get(), want), ("device c", i)
        dself = cla.to_device(q, a)
        clgemm.gemm(dself, db, dself)
        assert _close(dself.get(), want), ("c is a", i)
        got = clgemm.gemm(dwide[:, :size], db).get()
        assert _close(got, reference(wide[:, :size], b, None, 1.0, 0.0, False, False)), (
            "strided a", i)


@pytest.mark.parametrize("params", [CPU_IN_PLACE, {"TSM": 32, "TSN": 32, "TSK": 8, "WPTM": 4,
                                                   "WPTN": 4, "WIDTH": 4, "VWM": 4, "VWN": 4},
                                    TILED.forms["self-packing"]],
                         ids=["in-place block", "local memory", "self-packing"])
def test_a_stack_read_where_it_lies_on_an_out_of_order_queue(every_backend, stacks_on, params):
    """A stack on a configuration measured as a stack (one launch, each product's B read
    where it lies) on an out-of-order queue, ten tries each: a new array, a poisoned C, B
    broadcast, a view of A with a wider leading dimension (not read in place) right every
    time; and C that is A refused."""
    be = every_backend
    _opencl_only(be)
    stacks_on(TILED.resolve(params), True)
    q = _queue(be, True)
    size, count = 64, 4
    rng = np.random.default_rng(47)
    a, b = rand(rng, (count, size, size)), rand(rng, (count, size, size))
    wide = rand(rng, (count, size, 2 * size))
    want = np.matmul(a.astype(np.float64), b)
    da, db, dwide = cla.to_device(q, a), cla.to_device(q, b), cla.to_device(q, wide)
    db0 = cla.to_device(q, b[0])
    dc = cla.empty(q, (count, size, size), np.float32)
    for i in range(10):
        assert _close(clgemm.gemm(da, db).get(), want), ("new array", i)
        dc.fill(np.float32(np.nan))
        assert clgemm.gemm(da, db, dc) is dc
        assert _close(dc.get(), want), ("device c", i)
        assert _close(clgemm.gemm(da, db0).get(), np.matmul(a.astype(np.float64), b[0])), (
            "b broadcast", i)
        got = clgemm.gemm(dwide[:, :, :size], db).get()
        assert _close(got, np.matmul(wide[:, :, :size].astype(np.float64), b)), ("strided a", i)
    square = cla.to_device(q, a)
    with pytest.raises(UsageError, match="c shares memory with a"):
        clgemm.gemm(square, db, square)
