"""The panels' pack (`pack_panels_pair`) on the test device, against NumPy: both operands in
one launch, read as stored and transposed (in squares of 8, a CPU's AVX2 vector, and of 16), at
offsets and leading dimensions wider than the rows, with panel heights and last runs that are
no multiple of a square's side and edge blocks padded with zeros, and an operand read as
stored packed by blocks of a panel or down its columns (a CPU's form, whose blocks share the
columns' pieces in runs of equal length, the last runs short or empty). The output is poisoned first, so a value the pack leaves unwritten
shows up as NaN."""

from __future__ import annotations

import numpy as np
import pytest

from clgemm.configs.launch import HELPERS_FILE

RUN = 64


def _want(x: np.ndarray, offset: int, ld: int, rows: int, cols: int, trans: int,
          panel: int, out_cols: int) -> np.ndarray:
    """op(X) zero-padded to whole panels, laid out as the kernel lays it."""
    stored = x[offset:offset + ld * (rows if trans else cols)]
    op = stored.reshape(-1, ld)[:, :cols] if trans else stored.reshape(-1, ld)[:, :rows].T
    padded_rows = -(-rows // panel) * panel
    full = np.zeros((padded_rows, out_cols), np.float32)
    full[:rows, :cols] = op
    return full.reshape(-1, panel, out_cols).transpose(0, 2, 1).reshape(-1)


def _operand(rng: np.random.Generator, rows: int, cols: int, trans: int,
             extra_ld: int, offset: int) -> tuple[np.ndarray, int]:
    ld = (cols if trans else rows) + extra_ld
    return rng.standard_normal(offset + ld * (rows if trans else cols), dtype=np.float32), ld


@pytest.mark.parametrize("columns", [0, 1])
@pytest.mark.parametrize("sub", [8, 16])
@pytest.mark.parametrize("panels", [(16, 16), (12, 20), (8, 24), (32, 4)])
@pytest.mark.parametrize("rows, cols, out_cols", [(64, 128, 128), (61, 100, 104),
                                                    (48, 67, 67), (40, 200, 256),
                                                    (200, 5, 8)])
@pytest.mark.parametrize("trans", [(1, 0), (0, 1), (1, 1), (0, 0)])
def test_panels_match_numpy(backend, columns: int, sub: int, panels: tuple[int, int],
                            rows: int, cols: int, out_cols: int,
                            trans: tuple[int, int]) -> None:
    rng = np.random.default_rng(rows * 1000 + cols)
    knl = backend.program(HELPERS_FILE, {"PANEL_A": panels[0], "PANEL_B": panels[1],
                                         "PANEL_RUN": RUN, "PACK_SUB": sub,
                                         "PACK_COLUMNS": columns}, "pack_panels_pair")
    runs = -(-out_cols // RUN)
    args, wants, outs = [], [], []
    for panel, flag, offset, extra in zip(panels, trans, (3, 0), (5, 0)):
        x, ld = _operand(rng, rows, cols, flag, extra, offset)
        want = _want(x, offset, ld, rows, cols, flag, panel, out_cols)
        out = backend.to_device(np.full(want.size, np.nan, np.float32))
        blocks = -(-rows // panel) * runs
        args += [rows, cols, out_cols, backend.to_device(x), offset, ld, flag, out, blocks]
        wants.append(want)
        outs.append(out)
    backend.launch(knl, (args[8] + args[17],), (1,), args)
    for out, want in zip(outs, wants):
        np.testing.assert_array_equal(backend.to_host(out, want.size), want)
