"""Rung 10: rung 9 for any M, N, K >= 1, by bounds-checked (zero-filling) tile loads, ceil(K/TSK)
tiles and guarded stores.

Rung 9's pipeline, layout and parameters are kept; only the edges change. Vector loads stay where
M (for A) or N (for BT) is a multiple of WIDTH; otherwise the tiles are filled one checked float
at a time, a choice made once per launch. Nothing is padded on the host or by a helper kernel, so
the helper time reported for this rung is the transpose of B alone.
"""

from __future__ import annotations

from clgemm.rungs.base import Rung
from clgemm.rungs.r09_prefetch import RUNG as RUNG_9

RUNG = Rung(
    number=10, slug="any-size", title="any size, bounds-checked",
    adds="any M, N, K: bounds-checked loads and stores",
    file="10_any_size.cl", kernel="gemm_any_size",
    params=RUNG_9.params,
    derive=RUNG_9.derive,
    constraints=RUNG_9.constraints,
    local_size=RUNG_9.local_size,
    output_tile=RUNG_9.output_tile,
    k_step=lambda p: 1,
    local_mem_bytes=RUNG_9.local_mem_bytes,
    transposed_b=True,
    any_size=True,
    helpers=RUNG_9.helpers,
    teaches="edges without padding: zero-filled loads and guarded stores (vector loads only "
            "where M or N is a multiple of WIDTH); helper time is the transpose only",
)
