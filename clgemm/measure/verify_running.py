"""The case a verify process is running, kept in a file in the results folder while it runs.

A runtime that crashes on a kernel takes the sweep's process with it, and nothing the process
would print afterwards names the case (configurations borrowed from other devices are tried in
a child process first; the device's own and the gemm() paths are not). So before each case the
sweep writes it, in the format of a --failures file, to `verify-running/DEVICE-PID.json`, and
removes the file when it ends. The next verify of that device finds the files whose process is
gone, moves each to `verify-crashed/`, and names its case: the file replays it as it is
(`clgemm verify --replay FILE`). The file is replaced by a rename, without a sync: it must
outlive the process, not the machine.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from clgemm.configs.database import results_dir
from clgemm.devices.info import DeviceInfo
from clgemm.measure.verify import Case, CaseResult, failures_document

#: what a case left behind says of itself
MESSAGE = "the verify process ended while running this case"


def _stem(device: DeviceInfo) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", device.key)


class RunningCase:
    """Marks the case a sweep on `device` is about to run (`mark`) and clears it (`clear`)."""

    def __init__(self, device: DeviceInfo, folder: Path | None = None):
        self.device = device
        self.path = (folder or results_dir()) / "verify-running" / \
            f"{_stem(device)}-{os.getpid()}.json"
        self._tmp = self.path.with_name(f".{self.path.name}.tmp")

    def mark(self, case: Case) -> None:
        data = failures_document(self.device, "", [CaseResult(case, False, None, MESSAGE)])
        try:
            self._tmp.parent.mkdir(parents=True, exist_ok=True)
            self._tmp.write_text(json.dumps(data) + "\n")
            os.replace(self._tmp, self.path)
        except OSError:  # a folder that cannot be written costs the record, not the sweep
            pass

    def clear(self) -> None:
        for path in (self.path, self._tmp):
            try:
                path.unlink()
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def left_behind(device: DeviceInfo, folder: Path | None = None) -> list[tuple[Path, Any]]:
    """The cases earlier sweeps of `device` were running when their process ended, each moved
    to `verify-crashed/` first: (its file there, the case as saved)."""
    root = folder or results_dir()
    found = []
    for path in sorted((root / "verify-running").glob(f"{_stem(device)}-*.json")):
        stem, pid = path.stem.rsplit("-", 1)
        if stem != _stem(device) or not pid.isdigit() or _alive(int(pid)):
            continue  # another device whose name starts as this one's, or a sweep running
        target = root / "verify-crashed" / path.name
        try:
            data = json.loads(path.read_text())
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
        except (OSError, ValueError):
            continue
        cases = data.get("cases") if isinstance(data, dict) else None
        if isinstance(cases, list) and cases and isinstance(cases[0], dict):
            found.append((target, cases[0]))
    return found
