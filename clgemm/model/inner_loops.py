"""What one step of each rung's innermost loop does, counted from its kernel in `clgemm/kernels/`.

The performance bound (`model/bound.py`) reasons about one step of the loop over k that every kernel
ends in: how many multiply-adds a work-item does there, how many load instructions feed them,
from which memory, how wide, and which work-items of a sub-group read the same value. Those
counts are properties of the source text, so they are written down here once per rung, next to
the line they come from, rather than guessed from the parameters alone.

Rungs 6-10 and the tiled kernels (12, 13) share one form. Parameters that only some of them
have are read with their defaults when absent: VWM and VWN (A and B values read as vectors along M and N, default 1), CACHE_A and
CACHE_B (1: the operand goes through local memory, 0: it is read straight from global memory).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Mapping

from clgemm.rungs import Rung

#: registers every work-item needs besides its data: indices, addresses, loop counters (a low
#: estimate, so that the occupancy it implies errs on the generous side)
REGISTER_OVERHEAD = 8

#: defaults of the parameters only the tiled kernels have (the ladder's rungs read them so)
OPTIONAL_DEFAULTS = {"VWM": 1, "VWN": 1, "CACHE_A": 1, "CACHE_B": 1}


@dataclass(frozen=True)
class Read:
    """One kind of load in the step."""

    operand: str
    #: "local" or "global"
    space: str
    #: load instructions per work-item per step (a fraction where one load serves several steps)
    count: float
    #: floats per load instruction
    width: int
    #: which work-items share a value: "m" (it changes with local id 0), "n" (with local id 1
    #: only: every work-item of a row reads the same one) or "lane" (every work-item its own)
    along: str


@dataclass(frozen=True)
class LoopStep:
    """One step k of the innermost loop, per work-item."""

    #: the kernel lines this counts
    source: str
    fmas: int
    reads: tuple[Read, ...]
    #: arithmetic instructions besides the FMAs (they occupy the FMA units too)
    extra_arith: float = 0
    #: other instructions that take an issue slot (sub-group shuffles)
    other: float = 0
    #: what the extra instructions are
    extra_note: str = ""
    #: independent accumulations per work-item: how many FMAs can be in flight at once
    chains: int = 1
    #: estimated 32-bit registers per work-item
    registers: int = REGISTER_OVERHEAD

    @property
    def loads(self) -> float:
        return sum(r.count for r in self.reads)

    def in_loads_of(self, widest: int) -> "LoopStep":
        """The step as a device issues it whose load instructions move at most `widest`
        floats: a wider vector of the source takes several, each an issue slot (NVIDIA reads
        a float8 of local memory as two 128-bit loads)."""
        reads = tuple(Read(r.operand, r.space, r.count * -(-r.width // widest), widest, r.along)
                      if r.width > widest else r for r in self.reads)
        return dataclasses.replace(self, reads=reads)

    def loads_text(self) -> str:
        parts = []
        for r in self.reads:
            vec = f"x{r.width}" if r.width > 1 else ""
            parts.append(f"{r.count:g} {r.operand}{vec} ({r.space})")
        return " + ".join(parts)



def with_optional(params: Mapping[str, int]) -> dict[str, int]:
    """The parameters with the optional ones filled in at their defaults."""
    return {**OPTIONAL_DEFAULTS, **params}


def _naive(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
    return LoopStep("acc += A[k*M + m] * B[n*K + k]", fmas=1,
                reads=(Read("A", "global", 1, 1, "m"), Read("B", "global", 1, 1, "n")),
                chains=1, registers=1 + REGISTER_OVERHEAD)


def _tiling(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
    return LoopStep("acc += Atile[k][lm] * Btile[ln][k]", fmas=1,
                reads=(Read("A", "local", 1, 1, "m"), Read("B", "local", 1, 1, "n")),
                chains=1, registers=1 + REGISTER_OVERHEAD)


def _more_work(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
    wpt = p["WPT"]
    return LoopStep("a = Atile[k][lm]; acc[w] += a * Btile[ln + w*RTS][k] for WPT values of w",
                fmas=wpt, reads=(Read("A", "local", 1, 1, "m"), Read("B", "local", wpt, 1, "n")),
                chains=wpt, registers=wpt + 1 + REGISTER_OVERHEAD)


def _wide_types(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
    w = p["WIDTH"]
    # acc += Atile[W*kv][lm]*b.s0 + ... : per component a product, W-1 fused adds, then one
    # more add into acc (the sum is formed before acc joins it, so it cannot fuse): W extra.
    return LoopStep("b = Btile[ln][kv]; acc += Atile[W*kv + j][lm] * b.sj for j < WIDTH "
                "(floatWIDTH values)", fmas=w * w,
                reads=(Read("A", "local", w, w, "m"), Read("B", "local", 1, w, "n")),
                extra_arith=w if w > 1 else 0,
                extra_note="one add per component: the vector sum joins acc after it is formed",
                chains=w * w, registers=3 * w + REGISTER_OVERHEAD)


def _transposed(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
    wptn = p["WPTN"]
    return LoopStep("a = Atile[k][lm]; acc[w] += a * Btile[ln + w*RTSN][k] for WPTN values of w",
                fmas=wptn,
                reads=(Read("A", "local", 1, 1, "m"), Read("B", "local", wptn, 1, "n")),
                chains=wptn, registers=wptn + 1 + REGISTER_OVERHEAD)


def _blocked(prefetch: bool) -> Callable[[Mapping[str, int], Mapping[str, int]], LoopStep]:
    """Rungs 6-10, 12, 13: Breg[wn] = Btile[...][k], Areg[wm] = Atile[k][...], acc += ..."""

    def step(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
        p = with_optional(p)
        wptm, wptn, vwm, vwn = p["WPTM"], p["WPTN"], p["VWM"], p["VWN"]
        a_space = "local" if p["CACHE_A"] else "global"
        b_space = "local" if p["CACHE_B"] else "global"
        reads = [Read("A", a_space, wptm / vwm, vwm, "m")]
        other, note = 0.0, ""
        source = (f"Breg[wn] = B(k, WPTN values); Areg[wm] = A(k, WPTM values); "
                  f"acc[wm][wn] += Areg[wm] * Breg[wn]")
        if p.get("USE_SHUFFLE", 0) == 1 and b_space == "local":
            # Each lane reads one B value per KPS steps; the WPTN values of a step then come
            # from other lanes through shuffles, one instruction each.
            kps = max(1, m.get("KPS", 1))
            reads.append(Read("B", "local", 1 / kps, 1, "lane"))
            other, note = float(wptn), "sub-group shuffles of B values"
            source = ("share = Btile[...] once per KPS steps; Breg[wn] = SHUFFLE(share, ...); "
                      "acc[wm][wn] += Areg[wm] * Breg[wn]")
        else:
            reads.append(Read("B", b_space, wptn / vwn, vwn, "n"))
        registers = wptm * wptn + wptm + wptn + REGISTER_OVERHEAD
        if prefetch:  # the next tiles wait in registers during the step
            width = p.get("WIDTH", 1)
            registers += width * (m.get("LPTA", 0) * (1 if p["CACHE_A"] else 0)
                                  + m.get("LPTB", 0) * (1 if p["CACHE_B"] else 0))
        return LoopStep(source, fmas=wptm * wptn, reads=tuple(reads), other=other, extra_note=note,
                    chains=wptm * wptn, registers=registers)

    return step


def _skinny(p: Mapping[str, int], m: Mapping[str, int]) -> LoopStep:
    """Kernel 14: per step along K, VR values of the long operand from global memory and the
    short operand's SB columns, as float4s of the local block (YLOCAL) or floats where Y lies;
    the work-items of a lane read the same ones."""
    vr, sb = p["VR"], p["SB"]
    staged = p.get("YLOCAL", 1) == 1
    y = Read("Y", "local", sb / 4, 4, "n") if staged else Read("Y", "global", sb, 1, "n")
    loaded = p["KC"] * vr * (1 + p.get("PREFETCH", 0))
    return LoopStep("xv[u][v] = X(r_v, p); acc[v][s] += xv[u][v] * Y(p, 4s..4s+3)",
                    fmas=vr * sb, reads=(Read("X", "global", vr, 1, "m"), y),
                    chains=vr * sb // 4, registers=vr * sb + loaded + REGISTER_OVERHEAD)


#: rung number -> the step of its kernel's innermost loop
STEPS: dict[int, Callable[[Mapping[str, int], Mapping[str, int]], LoopStep]] = {
    1: _naive, 2: _tiling, 3: _more_work, 4: _wide_types, 5: _transposed,
    6: _blocked(False), 7: _blocked(False), 8: _blocked(False),
    9: _blocked(True), 10: _blocked(True),
    # The direct kernel's step is rung 6's: WPTM + WPTN scalar local reads, WPTM x WPTN FMAs.
    11: _blocked(False),
    12: _blocked(True), 13: _blocked(True),
    14: _skinny,
}


def step_for(rung: Rung, params: Mapping[str, int]) -> LoopStep:
    """The innermost step of `rung` with `params` (already checked for divisibility)."""
    try:
        make = STEPS[rung.number]
    except KeyError:
        raise KeyError(f"no inner-loop count for rung {rung.number}") from None
    return make(params, rung.all_macros(params))
