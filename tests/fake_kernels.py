"""The kernel files of the tests' fake rungs: each test module that defines a fake rung writes
its kernel at import, in every process that imports it (the test process, the measuring
processes, the builders, a cluster's workers), with the same text."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def kernel_file(name: str, text: str) -> Path:
    """`text` in a file of this user's temporary folder, written atomically (a process reading
    it while another writes it sees the whole text)."""
    path = Path(tempfile.gettempdir()) / f"clgemm-test-{name}-{os.getuid()}.cl"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path
