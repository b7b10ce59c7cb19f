"""Exceptions that carry a one-line message meant for the user.

The CLI turns every `ClgemmError` into a single `error:` line and exit status 2 (bad input) or 1
(something failed at run time), so a user never sees a traceback for a mistake they can fix.
From Python, a bad value is a `ValueError` and an argument of the wrong type a `TypeError`, as
NumPy users expect: `UsageError` derives from `ValueError`, `ArgumentTypeError` from both it
and `TypeError`, so `except ValueError`, `except TypeError` and `except UsageError` all work.
"""

from __future__ import annotations

from typing import Any, Mapping


class ClgemmError(Exception):
    """Base class; `exit_code` is what the CLI exits with."""

    exit_code = 1


class UsageError(ClgemmError, ValueError):
    """The user asked for something that cannot be done: unknown device, bad size, bad parameter."""

    exit_code = 2


class ArgumentTypeError(UsageError, TypeError):
    """An argument of the wrong type (a list where an array belongs, a string for a size)."""


class ConstraintError(UsageError):
    """A parameter set breaks a named constraint of a rung."""

    def __init__(self, rung: int, constraint: str, params: Mapping[str, Any]):
        self.rung = rung
        self.constraint = constraint
        self.params = dict(params)
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        super().__init__(f"rung {rung}: parameters {shown} break constraint '{constraint}'")


class BuildError(ClgemmError):
    """A kernel failed to compile; `log` holds the compiler's output."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


class LaunchError(ClgemmError):
    """A kernel failed to launch or to finish (resources, invalid work-group size, ...)."""
