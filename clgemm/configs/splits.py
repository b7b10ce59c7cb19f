"""Into how many slices gemm() splits K: the arithmetic both the choice of kernel and the
expected speeds of stored configurations need (a split multiplies the work-groups that fill
the device), kept apart so that the lookup can count it without the choice above it."""

from __future__ import annotations

from typing import Mapping

from clgemm.rungs.tiled import TILED

#: a split of K keeps each slice at least this deep, so the partial products stay few and each
#: slice's loop long enough to hide its loads
MIN_SLICE = 256
#: the shortest K that is split at all: a split costs one more launch (the sum of the slices),
#: which a short K does not repay
SPLIT_FROM_K = 2048
#: work-groups per compute unit a split aims for: one group per unit leaves most of its lanes
#: waiting on memory
GROUPS_PER_UNIT = 4
#: the fewest rows of C the tiled kernel splits K for: a C-ordered call packs the long operand
#: into BT first (K x N floats, read and written once), which on a thinner product costs more
#: than the direct kernel's reads in place save (results/h100/call/tune-medium.md)
MIN_SPLIT_ROWS = 64


def slices_to_fill(compute_units: int, groups: int, k: int, depth_step: int) -> int:
    """The power of two of slices that fills the device with `groups` work-groups per slice:
    at most GROUPS_PER_UNIT groups per compute unit, each slice at least MIN_SLICE deep and a
    multiple of `depth_step`."""
    split = 1
    while (groups * split * 2 <= GROUPS_PER_UNIT * compute_units
           and k % (split * 2 * depth_step) == 0 and k // (split * 2) >= MIN_SLICE):
        split *= 2
    return split


def tiled_slices(compute_units: int, params: Mapping[str, int],
                 shape: tuple[int, int, int]) -> int:
    """Into how many slices the tiled kernel splits K at this shape on a device of so many
    compute units (1: none): through local memory only (its batched form runs the slices;
    panels lie whole along K), at multiples of its tiles, where its tiles of C are too few to
    fill the device. A slice's depth stays a multiple of the tile depth. The tuner measures a
    configuration so split where gemm() would split it, so its ranking is gemm()'s."""
    m, n, k = shape
    if params.get("PANELS") or k < SPLIT_FROM_K or m < MIN_SPLIT_ROWS:
        return 1
    tm, tn, tk = TILED.size_multiples(TILED.resolve(dict(params)))
    if m % tm or n % tn or k % tk:
        return 1
    return slices_to_fill(compute_units, (m // tm) * (n // tn), k, tk)


