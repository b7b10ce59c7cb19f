"""A rung's macros as a student needs them: meaning, default, candidates and what changing one does.

All of it comes from the registry (`clgemm/rungs/`), which is also what the runner and the tuner
use, so a macro added to a rung appears here without any change to the course. The "effect" of a
macro is computed, not written: the configuration with that macro moved one candidate up from
its default is built on paper (geometry, local memory, derived macros) and compared with the
default one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from clgemm.rungs import Param, Rung


@dataclass(frozen=True)
class Geometry:
    """What a configuration means for the launch, computed by the registry's own functions."""

    work_group: tuple[int, int]
    tile: tuple[int, int]
    k_step: int
    local_bytes: int
    derived: dict

    @property
    def work_items(self) -> int:
        return math.prod(self.work_group)

    @property
    def outputs_per_item(self) -> int:
        return math.prod(self.tile) // max(1, self.work_items)


def geometry(rung: Rung, params: Mapping[str, int]) -> Geometry | None:
    """The geometry of `params`, or None when they break a divisibility constraint (the registry
    only derives macros for sets that pass it) or do not fit the rung's parameter names."""
    full = rung.complete(params)
    if full is None:
        return None
    try:
        if rung.first_violation(full, None, stages=("divisibility",)) is not None:
            return None
        return Geometry(work_group=rung.local_size(full), tile=rung.output_tile(full),
                        k_step=rung.k_step(full), local_bytes=rung.local_mem_bytes(full),
                        derived=rung.derive(full))
    except (KeyError, ZeroDivisionError, ValueError):
        return None


def kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def describe(g: Geometry) -> dict[str, str]:
    """The aspects of a geometry that the effect of a macro is told in, by name."""
    return {
        "work-group": f"{g.work_group[0]}×{g.work_group[1]} ({g.work_items} work-items)",
        "outputs per work-item": str(g.outputs_per_item),
        "tile of C per work-group": f"{g.tile[0]}×{g.tile[1]}",
        "local memory": kib(g.local_bytes),
        **{name: str(value) for name, value in g.derived.items()},
    }


def _step_up(p: Param) -> int | None:
    """The candidate after the default, else the one before it (the default may be the last)."""
    values = sorted(p.candidates)
    if p.default not in values:
        return values[0] if values else None
    i = values.index(p.default)
    if i + 1 < len(values):
        return values[i + 1]
    return values[i - 1] if i > 0 else None


def effect(rung: Rung, param: Param) -> str:
    """What moving `param` one candidate away from its default changes, at the other defaults."""
    value = _step_up(param)
    if value is None:
        return "single candidate"
    base = rung.defaults()
    moved = {**base, param.name: value}
    bad = rung.first_violation(moved, None, stages=("divisibility",))
    if bad is not None:
        return f"{param.name}={value}: breaks '{bad.name}'"
    before, after = geometry(rung, base), geometry(rung, moved)
    if before is None or after is None:
        return f"{param.name}={value}: no geometry"
    a, b = describe(before), describe(after)
    changes = [f"{k} {a[k]} → {b[k]}" for k in b if a.get(k) != b[k]]
    return f"{param.name}={value}: " + ("; ".join(changes) if changes
                                        else "same geometry; changes the code the kernel compiles")


@dataclass(frozen=True)
class MacroRow:
    name: str
    default: int
    candidates: tuple[int, ...]
    meaning: str
    effect: str


def macro_rows(rung: Rung) -> list[MacroRow]:
    return [MacroRow(p.name, p.default, tuple(p.candidates), p.meaning, effect(rung, p))
            for p in rung.params]


def constraint_rows(rung: Rung) -> list[tuple[str, str]]:
    """(stage, name) of every constraint, in the order the tuner's funnel applies them."""
    return [(c.stage, c.name) for c in rung.all_constraints()]
