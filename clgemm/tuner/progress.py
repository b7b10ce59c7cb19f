"""A one-line progress report on stderr: evaluations, failures, best so far, time left.

Hand-rolled rather than click.progressbar because the total is often unknown (a time budget, a
strategy that stops early) and the line must carry the best result, not just a fraction. On a
terminal the line is rewritten in place; into a file or pipe (CI logs, tests) it is written as
plain lines, at most one every `log_every` seconds, so logs stay readable.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


def clock(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, label: str, total: int | None, time_limit: float | None = None,
                 stream: TextIO | None = None, log_every: float = 10.0):
        self.label = label
        self.total = total
        self.time_limit = time_limit
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.log_every = log_every
        self.start = time.monotonic()
        self.last_log = 0.0
        self.width = 0

    def eta(self, done: int, evaluated_here: int) -> float | None:
        elapsed = time.monotonic() - self.start
        left: float | None = None
        if self.total is not None and evaluated_here > 0:
            left = max(self.total - done, 0) * elapsed / evaluated_here
        if self.time_limit is not None:
            by_clock = max(self.time_limit - elapsed, 0.0)
            left = by_clock if left is None else min(left, by_clock)
        return left

    def update(self, done: int, evaluated_here: int, failures: int, best: str,
               force: bool = False) -> None:
        total = f"/{self.total}" if self.total is not None else ""
        line = (f"{self.label}: {done}{total} evaluated, {failures} failed, best {best}, "
                f"{clock(time.monotonic() - self.start)} elapsed, "
                f"~{clock(self.eta(done, evaluated_here))} left")
        if self.tty:
            pad = max(self.width - len(line), 0)
            self.stream.write("\r" + line + " " * pad)
            self.width = len(line)
            self.stream.flush()
        elif force or time.monotonic() - self.last_log >= self.log_every:
            self.stream.write(line + "\n")
            self.stream.flush()
            self.last_log = time.monotonic()

    def close(self) -> None:
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
