"""Square operands on a device and the repeated gemm() call on them made once: what the scripts
that time a repeated call in one process (floor_parts.py, trial_after.py) start from. Imported
by them; it runs nothing itself."""

from typing import Any

import numpy as np

import clgemm
from clgemm.library import gemm as api
from clgemm.measure.call_bench import Side


def square_call(device: str, backend_name: str, n: int) -> tuple[Side, Any, Any, Any]:
    """(the arrays' side, A, B, C) of n x n random A and B and a zero C on the device, after one
    call gemm(A, B, C) and the device drained."""
    side = Side(api.backend_for(device, backend_name), "device")
    rng = np.random.default_rng(0)
    a, b = (side.put(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(2))
    c = side.put(np.zeros((n, n), np.float32))
    clgemm.gemm(a, b, c)
    side.sync()
    return side, a, b, c
