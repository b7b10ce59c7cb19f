"""What a plain `clgemm tune` does: the whole ladder and the shapes gemm() runs, in bounded time.

A tuning nobody runs helps nobody, and an exhaustive search of the top rungs (hundreds of
thousands of configurations) is a run nobody waits for. So without --budget or --time the tuner
follows a plan: each rung of the ladder at the ladder's size gets a little time (the course's
table should be tuned, but its rungs have small spaces or are not what gemm() runs), and the time
that matters goes to the kernels gemm() runs (the tiled kernels 12 and 13) at the shapes it is
called with, and to the direct kernel at a small square and at a small K (the crossover between
the packing kernels and the direct one is read from what is stored). Every search starts
from the best configurations the lookup chain knows for this device, its family and its type
(`seeds`), so the minutes go to improving on them rather than to finding them again; after
those, on a GPU, the configurations of a sample of the space that the performance model bounds
highest (`model_seeds`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Sequence

from clgemm.configs import lookup
from clgemm.core.problem import Problem
from clgemm.core.tables import FULL, Column, Layout, fit_lines, render
from clgemm.devices.hardware import hardware_for_device, kernel_vector_floats
from clgemm.model.bound import bound
from clgemm.rungs import LIBRARY, REGISTRY, VALUE_ERRORS, Rung, get_rung
from clgemm.rungs.direct import CPU_DEFAULTS as DIRECT_CPU_DEFAULTS
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import CPU_IN_PLACE, CPU_MICRO_KERNEL, TILED, cpu_self_packing
from clgemm.rungs.tiled_any import TILED_ANY
from clgemm.tuner.budget import DEFAULT_MINUTES
from clgemm.tuner.space import SLICED_WAVES

#: a step's shape: (M, N, K), or (BATCH, M, N, K) for a stack (`Problem.dims`)
Shape = tuple[int, ...]


@dataclass(frozen=True)
class TuneStep:
    """One search of a tuning run: a rung at a shape, with the seconds it is given."""

    rung: int
    shape: Shape
    seconds: float


#: what the model raises for a configuration it has no count for (a rung without an inner-loop
#: count, a value it cannot compute with): that configuration is left unranked
_UNRANKED: tuple[type[Exception], ...] = (KeyError, *VALUE_ERRORS)


def _square(s: int) -> Shape:
    return (s, s, s)


#: the small-K shape the direct kernel is tuned at besides a small square: products with a
#: short K are the direct kernel's too (`configs.choice`), and parameters found at a small
#: square do poorly there (results/h100/direct-small-k/). A GPU tunes the tiled kernel there
#: too, where its space holds only configurations that read B as it lies (`splits.reading_only`):
#: with its nearest entry a pipeline tuned at 4096x4096x128, gemm() ran the products of K 32-128
#: on 2048 squares behind a pack of B, their calls half as long again through OpenCL
#: (results/h100/fresh-tune/seventh)
SMALL_K: Shape = (2048, 2048, 64)

#: the tiled kernel's second small-K step, at the longest K of the class: a reader measured at
#: SMALL_K alone was expected at K=128 from that measurement, discounted for the distance, below
#: the pipeline of 4096x4096x128 behind its pack, which then ran 2048x2048x128 through OpenCL
#: at 33-38 us a call; with this step's reader, 30 (results/h200/small-k-128)
SMALL_K_LONG: Shape = (2048, 2048, 128)

#: the skinny shape the skinny kernel is tuned at: 16 columns of C (gemm() runs it no wider than
#: it was measured, `configs.choice`), a long operand of 4096 x 4096 on a GPU, 1024 x 1024 on a
#: CPU
SKINNY_GPU: Shape = (4096, 16, 4096)
SKINNY_CPU: Shape = (1024, 16, 1024)

#: the skinny products the skinny kernel does not run, 16 to 64 rows of C (a C-ordered
#: 4096 x 16 product, say), which gemm() gives the tiled kernel, K split where the tiles are too
#: few: a GPU tunes it at 16, 32 and 64 rows. Tiles found at 16 rows alone ran 64 rows far
#: behind the vendor (results/h100/fresh-tune/second), and tiles found at 16 and 64 ran 32 rows
#: well behind the vendor, where a step at 32 of its own brought it close
#: (results/h100/fresh-tune/sixth/steps)
THIN_GPU: Shape = (16, 4096, 4096)
THIN_MID_GPU: Shape = (32, 4096, 4096)
THIN_WIDE_GPU: Shape = (64, 4096, 4096)

#: the tiled kernel at 32 columns of C (a C-ordered 32 x 4096 product) too: there it ran ahead
#: of the skinny kernel tuned at 32 columns, which had run that product well behind the
#: vendor, and its tiles serve 64 columns as well, where the step of their own is not
#: needed (results/h100/fresh-tune/sixth/steps). Without an entry of the tiled kernel near 64
#: columns gemm() had run them on the kernel for any size (results/h100/fresh-tune/fourth)
SKINNY_TILED_GPU: Shape = (4096, 32, 4096)

#: a GPU's direct kernel is tuned at a small square too: parameters found at 512 cubed ran the
#: small calls' kernels slower than the shipped entries at 64-256 cubed did
#: (results/h100/fresh-tune/fourth). At 256 cubed rather than 128: a measurement at 128 cubed
#: is mostly a launch's fixed time, and its entry lost 192-256 cubed to the estimate from 512
#: cubed, which ran the CUDA path's call at 256 cubed in 10.3 µs against its 8.2
#: (results/h200/direct-256, direct-step-256)
SMALL_SQUARE_GPU = 256

#: a GPU tunes the kernel for any size where gemm() runs it, at sizes no tile divides: measured
#: at 4096 and 1024 cubed, where the tiled kernel runs instead, it stored speeds as high as the
#: tiled kernel's, which sent 4097 cubed and 2500x3500x4500 to it from the padded tiled kernel,
#: and there it ran well below that speed (results/h100/fresh-tune/fourth)
ANY_LARGE, ANY_MID = 4097, 1000

#: and at a short K off the tiles: stored only at long K, the kernel for any size was expected
#: there at half the speed it ran, so short-K products no tile divides went to the padded tiled
#: kernel, its copies and epilogue, or to the direct kernel, and ran up to twice as long as on
#: it (results/h200/any-short-k)
ANY_SHORT_K: Shape = (2000, 2000, 128)

#: the tiled kernel between the squares it is tuned at: from entries of 512, 1024 and 2048 cubed
#: and the kernel for any size's of 1000 cubed, the lookup expected the nearest, the kernel for
#: any size, fastest at 768 cubed, where it ran the CUDA path's call at 0.74 of cuBLAS; with a
#: step there, 1.03, and the products of short sides and long K that took its tiles for their
#: slices of K ran 1.25 (CUDA) and 1.07 (OpenCL) times as fast (results/h200/step-768)
MID_SQUARE_GPU = 768

#: a GPU tunes the tiled kernel on two stacks of small products, each product a grid of its own
#: in one launch: with no entry measured on a stack, a stack runs the tiles one product alone
#: was tuned on, made to fill the device with a few work-groups, and after the plain tune
#: 1000 products of 64 cubed and 100 of 256 cubed ran at 0.54 and 0.65 of cuBLAS's batched
#: call on an H200, against 1.21 and 1.01 with the shipped entries measured on those stacks
#: (results/h200/turns-targets)
STACKS_GPU: tuple[Shape, ...] = ((1000, 64, 64, 64), (100, 256, 256, 256))

#: per device type: the ladder's size, seconds per rung of the ladder, and the steps gemm() needs
#: (12: the tiled kernel, 13: the same for any size, 11: the direct kernel, 14: the skinny kernel).
#: A GPU's tiled kernel has steps at 2048 and 512 cubed of their own: the best tiles there are
#: neither 1024's nor 4096's, and gemm() with only those entries ran 2048 cubed well behind the
#: vendor's and 512 cubed on the direct kernel at half the tiled kernel's speed
#: (results/h100/fresh-tune). A GPU's direct kernel is tuned at 512 cubed, where the tiled
#: kernel is too, so that gemm() weighs two measured speeds there: tuned at 768 cubed alone, its
#: measured speed beat the tiled kernel's estimate from 512 and 1024, and 768 cubed ran on it at
#: half the tiled kernel's speed (results/h100/fresh-tune/second). A CPU's tiled kernel has one
#: at 256 cubed, where the direct kernel is tuned too: without it gemm() ran 256 cubed on the
#: direct kernel at half the tiled kernel's speed (results/pocl/fresh-tune)
_PLANS: dict[str, dict[str, Any]] = {
    "GPU": {"ladder": 4096, "lower": 3.5, "steps": (
        (12, _square(4096), 37.0), (13, _square(ANY_LARGE), 30.0), (12, _square(2048), 30.0),
        (12, _square(1024), 35.0), (13, _square(ANY_MID), 30.0), (12, _square(512), 20.0),
        (12, _square(MID_SQUARE_GPU), 10.0),
        (12, (4096, 4096, 128), 22.0), (12, SMALL_K, 17.0), (12, SMALL_K_LONG, 15.0),
        (13, ANY_SHORT_K, 15.0), (12, THIN_GPU, 17.0), (12, THIN_MID_GPU, 17.0),
        (12, THIN_WIDE_GPU, 17.0), (12, SKINNY_TILED_GPU, 17.0),
        (11, _square(512), 15.0), (11, _square(SMALL_SQUARE_GPU), 10.0), (11, SMALL_K, 15.0),
        (14, SKINNY_GPU, 19.0), *((12, stack, 10.0) for stack in STACKS_GPU))},
    "CPU": {"ladder": 512, "lower": 15.0, "steps": (
        (12, _square(512), 45.0), (13, _square(512), 40.0), (12, _square(1024), 120.0),
        (13, _square(1024), 50.0), (12, _square(2048), 100.0), (12, _square(256), 30.0),
        (11, _square(256), 60.0), (11, SMALL_K, 45.0), (14, SKINNY_CPU, 25.0))},
}

#: seconds of process start, compiles of the first batch and confirmation per step, by type,
#: the funnels before the first step spread over the steps: a GPU's whole plan took its seconds
#: and 5.2 a step, its measuring process and builders kept from shape to shape
#: (results/h100/fresh-tune/seventh)
STEP_OVERHEAD = {"GPU": 5.0, "CPU": 12.0}


def default_plan(device: Any) -> list[TuneStep]:
    """The plain tune's steps for this device type, in the order they run."""
    plan = _PLANS["CPU" if device.is_cpu else "GPU"]
    steps = [TuneStep(r, _square(plan["ladder"]), plan["lower"]) for r in sorted(REGISTRY)]
    steps += [TuneStep(r, shape, s) for r, shape, s in plan["steps"]]
    return steps


def bounded_steps(device: Any, rungs: Sequence[int], shapes: Sequence[Shape]) -> list[TuneStep]:
    """Chosen rungs and shapes without --budget or --time: each gets the plan's time for that
    rung (the library kernels' longest for the direct and tiled kernels, the ladder's else)."""
    plan = _PLANS["CPU" if device.is_cpu else "GPU"]
    top = max(s for _, _, s in plan["steps"])
    return [TuneStep(r, shape, top if r in LIBRARY else plan["lower"]) for shape in shapes
            for r in rungs]


def share_of(steps: Sequence[TuneStep], part: int, parts: int) -> list[TuneStep]:
    """Part `part` of `parts` of a run's steps, for identical devices tuned at once (`tune
    --device all`): they share one database and its journals, so each measures steps of its
    own. Longest steps first, each to the part with the fewest seconds so far, then the fewest
    steps (a run limited by evaluations, not time, has steps of no seconds), then the
    earliest; every part keeps its steps in the run's order."""
    loads = [0.0] * parts
    counts = [0] * parts
    owner: dict[int, int] = {}
    for i in sorted(range(len(steps)), key=lambda i: (-steps[i].seconds, i)):
        least = min(range(parts), key=lambda j: (loads[j], counts[j], j))
        owner[i] = least
        loads[least] += steps[i].seconds
        counts[least] += 1
    return [step for i, step in enumerate(steps) if owner[i] == part]


def estimated_minutes(device: Any, steps: Sequence[TuneStep]) -> float:
    overhead = STEP_OVERHEAD["CPU" if device.is_cpu else "GPU"]
    return sum(s.seconds + overhead for s in steps) / 60.0


def plan_table(device: Any, steps: Sequence[TuneStep], layout: Layout = FULL) -> str:
    """The plan's steps, one line each, and the time they add up to."""
    rows = [[s.rung, get_rung(s.rung).title, "x".join(map(str, s.shape)), f"{s.seconds:g}"]
            for s in steps]
    limit = DEFAULT_MINUTES.get(device.type, DEFAULT_MINUTES["GPU"])
    table = render(["rung", Column("name", wrap=16), "shape", "seconds"], rows, layout)
    return "\n".join(fit_lines([table, f"about {estimated_minutes(device, steps):.1f} minutes in "
                                       f"all, starts and confirmations included (a plain tune "
                                       f"stays within {limit} on a {device.type})"], layout))


def seeds(device: Any, rung: Rung, shape: Shape, count: int = 6,
          batch: int = 1) -> list[dict[str, int]]:
    """The best stored configurations for this rung at this shape, whatever level of the lookup
    chain they come from (this device, another driver, the family, the device type), in the
    chain's order there (`lookup.ranked`: what the chain would run first): the search measures
    these first (transfer between devices), and the nearest one stored for this device under
    the other backend (`lookup.other_backends`). Every configuration stored at this very slot
    by any level comes next: the entry the tune stores there outranks them for this device
    (`lookup.ranked`), which holds only if it was measured against them, and one of another
    device's that is newer or of a larger parameter set than this device's own would
    otherwise go untried here. For a stack of `batch` products, those measured on stacks
    come first, since a stack's best tiles are not one product's: a stack's tune on one
    backend starts where the other backend's ended. A GPU's tune of the tiled kernel then
    tries the first with a larger register block (`grown_blocks`)."""
    found = lookup.ranked(device, rung, shape, batch=batch)
    # the chain's first, then this device's nearest under the other backend, then a CPU's
    # starting points, then the tiled kernel's (for the kernel for any size), then the rest
    other = lookup.other_backends(device, rung, shape, batch=batch)
    if batch > 1 and not other:
        other = lookup.other_backends(device, rung, shape)
    out: list[dict[str, int]] = []
    for params in [*(f.params for f in [*found[:1], *other[:1]]), *_starting_points(device, rung)]:
        if params not in out:
            out.append(params)
    at_slot = [f.params for f in found[1:] if f.shape == tuple(shape) and f.batch == batch]
    borrowed = tiled_for_any_size(device, shape) if rung.number == TILED_ANY.number else []
    for params in [*at_slot, *borrowed, *(f.params for f in found[1:])]:
        if len(out) >= count:
            break
        if params not in out:
            out.append(params)
    if rung.number == TILED.number and not device.is_cpu and found:
        out += [p for p in grown_blocks(found[0].params, device.compute_units, shape)
                if p not in out]
        out += [p for p in sliced_groups(found[0].params, device.compute_units, shape)
                if p not in out]
    return out


def _starting_points(device: Any, rung: Rung) -> list[dict[str, int]]:
    """A CPU's hand-made configurations, measured whatever is stored: what gemm() runs there
    with nothing stored. They follow what the lookup chain would run, so that the first
    seeds, whose variants are measured with them (`rung_tune.VARIANT_SEEDS`), are the ones
    this device or its family measured fastest near the shape: a plain tune at 2048 cubed on
    a CPU had its variants spent on these while the entries its earlier steps stored went
    without."""
    if not device.is_cpu:
        return []
    if rung.number == DIRECT.number:
        return [DIRECT.resolve(DIRECT_CPU_DEFAULTS)]
    if rung.number == TILED.number:
        packing = cpu_self_packing(kernel_vector_floats(device.name))
        return [TILED.resolve(p) for p in (CPU_MICRO_KERNEL, CPU_IN_PLACE, packing)]
    return []


def sliced_groups(params: dict[str, int], compute_units: int, shape: Shape
                  ) -> list[dict[str, int]]:
    """The tiled kernel's configuration with its work-groups cut into 2 and 4 slices of K,
    with its tiles as they were and halved along M and N (its register block kept): on a
    product whose tiles of C leave the compute units few warps each, slices put more of them
    to work over a shorter loop, and smaller tiles more groups, at no second launch. The seeds'
    variants try slices on their own tiles only, and the fastest tiles with slices need not be
    the fastest without: at 512 cubed on an H200's CUDA path, 32 x 32 with slices and 64 x 16
    without (results/h200/k-slices). Only where the product gives fewer than SLICED_WAVES
    work-groups of those tiles per compute unit (where the search keeps slices)."""
    base = {**TILED.resolve(dict(params)), "CACHE_A": 1, "CACHE_B": 1, "PIPELINE": 0,
            "WARP_M": 0, "PANELS": 0, "LOCKSTEP": 0}
    out: list[dict[str, int]] = []
    for shrink in (1, 2):
        for slices in (2, 4):
            p = {**base, "TSM": base["TSM"] // shrink, "TSN": base["TSN"] // shrink,
                 "KSPLIT": slices}
            tiles = -(-shape[0] // p["TSM"]) * -(-shape[1] // p["TSN"])
            if tiles < SLICED_WAVES * compute_units and p not in out:
                out.append(p)
    return out


#: work-groups per compute unit a product must give the grown tiles for a tune to try them:
#: fewer, and the larger tiles leave units idle, whatever they save per FMA
GROWN_WAVES = 2


def grown_blocks(params: dict[str, int], compute_units: int, shape: Shape
                 ) -> list[dict[str, int]]:
    """The tiled kernel's configuration with twice the sums per work-item, along M or along N;
    its work-group as it was or twice as large; that axis's register reads as wide as they
    were or twice as wide. Each step of k then issues fewer local loads per FMA, the one part
    of the instruction mix in which cuBLAS's FP32 kernel was ahead of the tiled kernel on the
    H100 (results/h100/gap-account); whether the registers still leave enough sub-groups
    resident is for the measurement to say. Only where the product still gives every
    compute unit GROWN_WAVES work-groups of the grown tiles."""
    base = TILED.resolve(dict(params))
    out: list[dict[str, int]] = []
    for axis, other in (("M", "N"), ("N", "M")):
        for group in (1, 2):
            for width in (1, 2):
                p = {**base, f"WPT{axis}": 2 * base[f"WPT{axis}"],
                     f"TS{axis}": 2 * base[f"TS{axis}"],
                     f"TS{other}": group * base[f"TS{other}"],
                     f"VW{axis}": width * base[f"VW{axis}"]}
                tiles = -(-shape[0] // p["TSM"]) * -(-shape[1] // p["TSN"])
                if tiles >= GROWN_WAVES * compute_units and p not in out:
                    out.append(p)
    return out


#: how many of the tiled kernel's stored configurations seed a search of the kernel for any size
BORROWED_SEEDS = 2


def tiled_for_any_size(device: Any, shape: Shape) -> list[dict[str, int]]:
    """The tiled kernel's best stored configurations near this shape (the lookup's order,
    whether their tiles divide it or not), as the kernel for any size takes them: the two share
    their parameters but for the tiled kernel's CPU forms (panels, lockstep; such a configuration
    is left out) and its order of work-items (set to none). The kernel for any size is tuned at
    fewer shapes than the tiled kernel, whose best tiles at the nearest shape are a better start
    than its own at a far one: at 1000 cubed on the H100 the tiled kernel's 1024-cubed
    configuration outran the kernel's own stored one (results/h100/any-size-orders)."""
    out: list[dict[str, int]] = []
    for f in lookup.ranked(device, TILED, shape, fit=False):
        params = TILED.resolve(dict(f.params))
        if params["PANELS"] or params["LOCKSTEP"]:
            continue
        taken = TILED_ANY.resolve({name: params[name] for name in TILED_ANY.param_names()})
        if taken not in out:
            out.append(taken)
        if len(out) >= BORROWED_SEEDS:
            break
    return out


#: configurations whose bound is computed per search (each costs a few tens of microseconds), and
#: how many of the highest-bound ones the search measures first
BOUND_SAMPLE = 2000
BOUND_SEEDS = 4


def bound_seeds(device: Any, rung: Rung, space: Any, shape: Shape,
                count: int = BOUND_SEEDS, sample: int = BOUND_SAMPLE,
                seed: int = 0, batch: int = 1) -> list[dict[str, int]]:
    """The configurations of a random sample of the space with the highest performance bound
    (`model.bound`) at this shape: where nothing is known, the model's ranking is a better start
    than chance, since it sees what the instruction mix, local memory, latency and the spread of
    work-groups allow each configuration at most; for a stack of `batch` products, as one
    grid."""
    if not len(space):
        return []
    rng = random.Random(seed * 7919 + rung.number)
    picked = space.configs if len(space) <= sample else rng.sample(space.configs, sample)
    hw = hardware_for_device(device)
    problem = Problem(shape[0], shape[1], shape[2], batch)
    scored = []
    for c in picked:
        try:
            scored.append((bound(rung, space.params(c), problem, hw).gflops, c))
        except _UNRANKED:  # a configuration the model has no count for
            continue
    scored.sort(key=lambda sc: -sc[0])
    return [space.params(c) for _, c in scored[:count]]


def model_seeds(device: Any, rung: Rung, space: Any, shape: Shape, seed: int = 0,
                batch: int = 1) -> list[dict[str, int]]:
    """`bound_seeds` where the model's ranking is a start worth measuring: not on a CPU, whose
    micro-kernel (panels, no local memory) the model's figures do not see. There the model's
    four seeds measured 2-25% of the best of every tiled-kernel step of both CPUs' plain tunes,
    and at 2048 cubed on two cores took 52 of the step's 100 seconds
    (results/pocl/model-seeds)."""
    if device.is_cpu:
        return []
    return bound_seeds(device, rung, space, shape, seed=seed, batch=batch)


GO_FURTHER = ("to go further: 'clgemm tune --rungs tiled,tiled-any --size S --time SECONDS' "
              "searches longer at the sizes you use; '--only NAME=V1,V2' narrows a search where "
              "experience points; '--exhaustive' measures a whole space (its time is printed "
              "first)")
