"""Wall time per call of calls repeated back to back, for `bench --call` and the scripts that
time gemm() the same way.

Calls compared with one another are timed in turns, a batch of each after a batch of the
other, rather than one's batches after the other's: a process's calls on a GPU run at one of
two speeds for stretches of a second or more (NVIDIA's OpenCL: 12 or 16-17 µs a call at 256
cubed, CLBlast's 18 or 28, results/h200/direct-step-256), so times taken apart compare the
stretches as much as the calls.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Sequence

#: a batch of calls lasts at least this long
BATCH_S = 0.2
#: batches per call; the median is its time
BATCHES = 5
#: calls run untimed for at least this long before the batches: the first tens of milliseconds
#: of small calls in a process ran up to twice as long as the rest (results/h100/small-calls)
WARM_S = 0.25
#: the most calls in one batch
MOST_CALLS = 500


def per_call_ms(call: Callable[[], Any], sync: Callable[[], None]) -> float:
    """Median over batches of the wall time per call, calls back to back, drained at the end,
    once calls have run for WARM_S: a repeated call's own time, not the warming of the driver
    and clocks, which only the first shape of a run would pay."""
    got = per_call_ms_in_turns([call], sync)[0]
    if isinstance(got, BaseException):
        raise got
    return got


def per_call_ms_in_turns(calls: Sequence[Callable[[], Any]], sync: Callable[[], None]
                         ) -> list[float | Exception]:
    """`per_call_ms` of each call, their batches in turns: each call's time is the median of
    batches that alternate with the others'. A call that raises is left out of the turns from
    then on, and its place holds what it raised."""
    out: list[float | Exception] = [0.0] * len(calls)
    reps: dict[int, int] = {}
    for i, call in enumerate(calls):
        try:
            reps[i] = _warmed_reps(call, sync)
        except Exception as exc:  # noqa: BLE001 - the caller says whose failure it is
            out[i] = exc
    means: dict[int, list[float]] = {i: [] for i in reps}
    for _ in range(BATCHES):
        for i in list(reps):
            try:
                means[i].append(_batch_ms(calls[i], reps[i], sync))
            except Exception as exc:  # noqa: BLE001
                out[i] = exc
                del reps[i]
    for i in reps:
        out[i] = statistics.median(means[i])
    return out


def _warmed_reps(call: Callable[[], Any], sync: Callable[[], None]) -> int:
    """Run the call for WARM_S, each drained (a long call queues no more), then say how many
    calls make a batch of BATCH_S."""
    start = time.perf_counter()
    call()
    sync()
    while time.perf_counter() - start < WARM_S:
        call()
        sync()
    t0 = time.perf_counter()
    call()
    sync()
    one = max(time.perf_counter() - t0, 1e-6)
    return max(3, min(MOST_CALLS, int(BATCH_S / one)))


def _batch_ms(call: Callable[[], Any], reps: int, sync: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    for _ in range(reps):
        call()
    sync()
    return (time.perf_counter() - t0) / reps * 1e3
