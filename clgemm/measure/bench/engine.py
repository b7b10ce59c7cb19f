"""Interleaved timing: every checked contender (a rung, a library) runs once per round, in an
order rotated each round, each call on the next input set."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Sequence

#: timed work each contender gets when --repeats is not given (seconds)
TARGET_S = 1.0
MIN_REPEATS = 3
MAX_REPEATS = {"CPU": 20, "GPU": 50}


#: one timed call on input set `i`: its total ms, or the parts that add up to it
Timer = Callable[[int], "float | tuple[float, ...]"]


@dataclass
class Contender:
    """Something timed in the interleaved rounds: a checked rung or a checked library."""

    key: str
    timer: Timer
    estimate_ms: float | None = None  # from the check or the last warm-up run
    repeats: int = 0
    times: list[float] = field(default_factory=list)
    parts: list[tuple[float, ...]] = field(default_factory=list)
    error: str = ""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    def median_part(self, i: int) -> float | None:
        vals = [p[i] for p in self.parts if len(p) > i]
        return statistics.median(vals) if vals else None


def rotated(items: Sequence, r: int) -> list:
    """Round r's order: the list rotated left by r places."""
    if not items:
        return []
    s = r % len(items)
    return list(items[s:]) + list(items[:s])


def planned_repeats(estimate_ms: float | None, target_s: float, cap: int) -> int:
    if not estimate_ms or estimate_ms <= 0:
        return cap
    return max(MIN_REPEATS, min(cap, int(target_s * 1e3 / estimate_ms)))


def measure(contenders: Sequence[Contender], *, warmup: int, repeats: int | None, sets: int = 1,
            target_s: float = TARGET_S, cap: int = MAX_REPEATS["GPU"]) -> None:
    """Warm-up rounds, then timed rounds; each round runs every live contender once, in the
    order rotated by the round number (counted on from the warm-up rounds). Each call takes
    the next input set (0, 1, ..., sets-1, 0, ...), so no call finds the set it reads still
    cached from the call before it. A contender whose call raises is dropped with its error."""
    counter = [0]

    def call(c: Contender) -> tuple[float, ...] | None:
        s = counter[0] % max(1, sets)
        counter[0] += 1
        try:
            out = c.timer(s)
        except Exception as exc:  # a failure is that contender's result, not the bench's end
            c.error = f"{type(exc).__name__}: {exc}"
            return None
        return tuple(out) if isinstance(out, (tuple, list)) else (float(out),)

    for r in range(warmup):
        for c in rotated(contenders, r):
            if not c.error and (parts := call(c)) is not None:
                c.estimate_ms = sum(parts)
    for c in contenders:
        c.repeats = repeats if repeats is not None else planned_repeats(c.estimate_ms,
                                                                        target_s, cap)
    rounds = max((c.repeats for c in contenders), default=0)
    for r in range(warmup, warmup + rounds):  # the rotation goes on from the warm-up rounds
        for c in rotated(contenders, r):
            if c.error or len(c.times) >= c.repeats:
                continue
            parts = call(c)
            if parts is not None:
                c.times.append(sum(parts))
                c.parts.append(parts)
