"""The kernels of `clgemm/kernels/` as records: the teaching ladder (rungs 1-10) and the library
kernels beside it (11-14).

The ladder follows myGEMM's ten steps, one idea each; every rung's kernel is the one before plus
that idea. The library kernels are what gemm() and the tuner run where speed matters rather than
teaching: the direct kernel (11, one launch for the whole BLAS call), the tiled kernel (12: rung
9's pipeline with register vectors, optional local memory and CPU panels) and the same for any
size (13), and the skinny kernel (14) for products with few rows or columns of C.

The record type and its shared pieces are in `base.py`; each kernel's record in a module of its
own. This module only gathers them.
"""

from __future__ import annotations

from clgemm.core.errors import UsageError
from clgemm.rungs.base import (STAGES, TRANSPOSE_B, VALUE_ERRORS, Constraint, Helper, Param,
                               Params, Rung, divisible)
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.r01_naive import RUNG as _R1
from clgemm.rungs.r02_tiling import RUNG as _R2
from clgemm.rungs.r03_more_work import RUNG as _R3
from clgemm.rungs.r04_wide_types import RUNG as _R4
from clgemm.rungs.r05_transposed import RUNG as _R5
from clgemm.rungs.r06_register_blocking import RUNG as _R6
from clgemm.rungs.r07_wide_loads import RUNG as _R7
from clgemm.rungs.r08_vendor_loads import RUNG as _R8
from clgemm.rungs.r09_prefetch import RUNG as _R9
from clgemm.rungs.r10_any_size import RUNG as _R10
from clgemm.rungs.tiled import TILED, panel_helpers
from clgemm.rungs.skinny import SKINNY
from clgemm.rungs.tiled_any import TILED_ANY

#: the teaching ladder, by rung number (1-10)
REGISTRY: dict[int, Rung] = {r.number: r for r in (_R1, _R2, _R3, _R4, _R5, _R6, _R7, _R8, _R9,
                                                   _R10)}

#: kernels beside the ladder that gemm() runs and the tuner tunes, by number
LIBRARY: dict[int, Rung] = {r.number: r for r in (DIRECT, TILED, TILED_ANY, SKINNY)}

#: the library kernels by the name `--rungs` accepts
LIBRARY_NAMES: dict[str, int] = {r.slug: r.number for r in LIBRARY.values()}

#: every kernel record, ladder and library
ALL_RUNGS: dict[int, Rung] = {**REGISTRY, **LIBRARY}

#: what gemm()'s packing path chooses among (the direct kernel has its own path): the ladder and
#: the tiled kernels
GEMM_RUNGS: tuple[int, ...] = tuple(sorted(REGISTRY)) + (TILED.number, TILED_ANY.number)

#: the kernel every size falls back to when nothing stored fits
ANY_SIZE_RUNG = TILED_ANY.number


def _known() -> str:
    library = ", ".join(f"{n} or '{r.slug}' (the {r.title.split(':')[0]})"
                        for n, r in sorted(LIBRARY.items()))
    return f"the ladder is rungs {min(REGISTRY)}-{max(REGISTRY)}; beside it {library}"


def get_rung(number: int) -> Rung:
    """A rung of the ladder (1-10) or a library kernel (11 direct, 12 tiled, 13 tiled-any,
    14 skinny)."""
    try:
        return ALL_RUNGS[number]
    except (KeyError, TypeError):
        raise UsageError(f"there is no rung {number} ({_known()})") from None


def kernel_label(number: int) -> str:
    """How tables and messages name a kernel: 'rung N' on the ladder, the name beside it."""
    rung = LIBRARY.get(number)
    return f"rung {number}" if rung is None else f"{rung.slug} ({number})"


def parse_rungs(spec: str) -> list[int]:
    """'1-5', '1,3,7-10', 'all' (the ladder), 'direct', 'tiled', 'tiled-any' or 'skinny' among
    them -> sorted numbers; anything else is a UsageError."""
    numbers: set[int] = set()
    for part in spec.split(","):
        part = part.strip()
        name = part.lower()
        if name == "all":
            numbers.update(REGISTRY)
            continue
        if name in LIBRARY_NAMES:
            numbers.add(LIBRARY_NAMES[name])
            continue
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                numbers.update(range(lo, hi + 1))
            else:
                numbers.add(int(part))
        except ValueError:
            raise UsageError(f"--rungs: cannot read '{spec}' (write e.g. 1-5, 1,3,6-10 or "
                             f"9,{','.join(LIBRARY_NAMES)}; {_known()})") from None
    for n in sorted(numbers):
        get_rung(n)
    return sorted(numbers)
