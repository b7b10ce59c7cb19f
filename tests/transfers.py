"""Refusing host<->device copies through a backend while gemm() runs on device arrays, but for
those of a configuration's trial (clgemm/library/trial.py), which uploads its own small
operands and reads its own result once per configuration: the caller's arrays must stay put."""

from __future__ import annotations

import sys
from typing import Any

from clgemm.library import signatures

#: the function whose copies are the trial's own
TRIAL = signatures.try_configuration.__code__


def _in_trial() -> bool:
    frame: Any = sys._getframe(2)
    while frame is not None:
        if frame.f_code is TRIAL:
            return True
        frame = frame.f_back
    return False


def refuse_host_transfers(monkeypatch: Any, backend_class: type, message: str) -> None:
    """Make the backend's `to_host` and `to_device` fail with `message` outside a trial."""
    for name in ("to_host", "to_device"):
        real = getattr(backend_class, name)

        def guarded(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if not _in_trial():
                raise AssertionError(message)
            return _real(*args, **kwargs)

        monkeypatch.setattr(backend_class, name, guarded)
