"""Rung 8: rung 7 with restrict-qualified inputs read through LOAD_GLOBAL, and an opt-in
sub-group shuffle that shares the B register values between the lanes of a sub-group.

The shuffle path is off by default (USE_SHUFFLE=0) so that the rung builds and runs on every
device; switching it on is refused by a device constraint where neither cl_khr_subgroup_shuffle
nor cl_intel_subgroups is present, before any build is tried.
"""

from __future__ import annotations

from clgemm.rungs.base import TRANSPOSE_B, Constraint, Param, Params, Rung
from clgemm.rungs.r06_register_blocking import (BLOCKING_CONSTRAINTS, PAD_PARAM, TILE_PARAMS,
                                                local_size, output_tile, tile_bytes)
from clgemm.rungs.r07_wide_loads import WIDE_LOAD_CONSTRAINTS, WIDTH_PARAM, derive_wide

SHUFFLE_EXTENSIONS = ("cl_khr_subgroup_shuffle", "cl_intel_subgroups")

SHUFFLE_PARAMS = (
    Param("USE_SHUFFLE", (0, 1), 0, "1: share B register values through sub-group shuffles",
          minimum=0),
    Param("SGS", (8, 16, 32, 64), 32, "sub-group size the shuffle path is built for"),
)


def _derive(p: Params) -> dict[str, int]:
    # KPS only matters with USE_SHUFFLE=1, where a constraint makes it a whole number >= 1.
    return {**derive_wide(p), "KPS": max(1, p["SGS"] // p["WPTN"])}


def _shuffling(p: Params) -> bool:
    return p["USE_SHUFFLE"] == 1


def _rtsm(p: Params) -> int:
    return p["TSM"] // p["WPTM"]


SHUFFLE_CONSTRAINTS = (
    Constraint("USE_SHUFFLE is 0 or 1", "divisibility", lambda p, d: p["USE_SHUFFLE"] in (0, 1)),
    # The lanes of one sub-group must share a column tidn, so it may not straddle two of them.
    Constraint("USE_SHUFFLE=0 or RTSM % SGS == 0 (a sub-group within one column)", "divisibility",
               lambda p, d: not _shuffling(p) or _rtsm(p) % p["SGS"] == 0),
    # Each lane reads one B value, so one read by the sub-group covers whole steps k of WPTN
    # values each only if WPTN divides SGS. That those KPS = SGS/WPTN steps also tile TSK needs
    # no constraint of its own: whole vector B-tile loads give TSK*WPTN = c*WIDTH*RTSM for a
    # whole c, and RTSM is a multiple of SGS = KPS*WPTN, so KPS divides TSK.
    Constraint("USE_SHUFFLE=0 or SGS % WPTN == 0 (whole steps per sub-group read)", "divisibility",
               lambda p, d: not _shuffling(p) or p["SGS"] % p["WPTN"] == 0),
    Constraint("USE_SHUFFLE=0 or the device has sub-group shuffles "
               "(cl_khr_subgroup_shuffle or cl_intel_subgroups)", "device",
               lambda p, d: not _shuffling(p)
               or any(d.has_extension(e) for e in SHUFFLE_EXTENSIONS)),
    # Where the device does not report its sub-group sizes this cannot be checked here; the
    # kernel then compares the real size with SGS and falls back to local-memory reads.
    Constraint("USE_SHUFFLE=0 or SGS is a sub-group size of the device", "device",
               lambda p, d: not _shuffling(p) or not d.sub_group_sizes
               or p["SGS"] in d.sub_group_sizes),
    # SGS changes nothing without the shuffle path: a tuner need not try its other values there.
    Constraint("SGS at its default unless USE_SHUFFLE=1", "heuristic",
               lambda p, d: _shuffling(p) or p["SGS"] == SHUFFLE_PARAMS[1].default),
)

RUNG = Rung(
    number=8, slug="vendor-loads", title="restrict, read-only loads, sub-group shuffles",
    adds="restrict + LOAD_GLOBAL inputs; opt-in sub-group shuffle",
    file="08_vendor_loads.cl", kernel="gemm_vendor_loads",
    params=TILE_PARAMS + (WIDTH_PARAM, PAD_PARAM) + SHUFFLE_PARAMS,
    derive=_derive,
    constraints=BLOCKING_CONSTRAINTS + WIDE_LOAD_CONSTRAINTS + SHUFFLE_CONSTRAINTS,
    local_size=local_size,
    output_tile=output_tile,
    k_step=lambda p: p["TSK"],
    local_mem_bytes=tile_bytes,
    transposed_b=True,
    helpers=(TRANSPOSE_B,),
    teaches="vendor hints: aliasing promises, read-only caches, and register exchange "
            "between lanes instead of local memory",
)
