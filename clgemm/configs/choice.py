"""The kernel gemm() runs at a shape: the direct kernel or one it packs for, each with the
configuration the lookup chain stores, else its defaults.

CLBlast's routine asks one tuned value whether a product is large enough for the indirect path
(XGEMM_MIN_INDIRECT_SIZE) and knows nothing of where parameters come from; the same holds
here. The crossover is a value of the device (`crossover`): where the lookup holds both kinds
of kernel for it, the smallest measured product at which a packing kernel beats what the direct
kernel leads one to expect there; else the rule for the device's type. Below it the direct
kernel runs; above it, where both kinds were measured, the choice at a shape compares their
expected speeds, which is finer than any single size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping

from clgemm.configs import lookup
from clgemm.configs.configuration import Config, from_found
from clgemm.configs.splits import (SPLIT_FROM_K, b_pack_s, launch_s_on, read_b_pays,
                                   reading_only, slices_gemm_decides, slices_to_fill)
from clgemm.core.errors import UsageError
from clgemm.devices.hardware import hardware_for_device
from clgemm.devices.info import DeviceInfo
from clgemm.rungs import ANY_SIZE_RUNG, GEMM_RUNGS, Rung, get_rung
from clgemm.rungs.direct import CPU_DEFAULTS as DIRECT_CPU_DEFAULTS
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.skinny import SHORT_MAX, SKINNY, k_slices, short_is_n
from clgemm.rungs.tiled import TILED, reads_b_itself
from clgemm.rungs.tiled_any import TILED_ANY

#: Without measurements of both kinds, products of fewer multiply-adds than this run on the
#: direct kernel: packing, padding and a second launch cost more than they save on small
#: products (the part CLBlast's XGEMM_MIN_INDIRECT_SIZE plays).
DIRECT_BELOW = {"GPU": 768**3, "CPU": 512**3}

#: whether a configuration (kernel number, parameters) already failed here and must not be
#: chosen again
Rejected = Callable[[int, Mapping[str, int]], bool]


def never(number: int, params: Mapping[str, int]) -> bool:
    return False


@dataclass(frozen=True)
class Crossover:
    """The smallest product (M*N*K multiply-adds) that runs on a packing kernel, and where
    that number comes from."""

    min_indirect: int
    source: str


def no_crossover(device: DeviceInfo) -> Crossover:
    """A crossover of zero, for a caller that wants the packing kernels at every size (tests
    of that path, on any device and database)."""
    return Crossover(0, "none")


def crossover(device: DeviceInfo) -> Crossover:
    """The device's direct/indirect crossover, measured where the lookup holds both kinds:
    the geometric mean of the largest product the direct kernel was tuned at below the
    smallest at which a packing kernel was measured faster than the direct kernel leads one to
    expect, and that smallest one (the plain tune measures the direct kernel at the small
    shapes it is meant for); that product alone where the direct kernel was tuned at nothing
    smaller."""
    default = Crossover(DIRECT_BELOW.get(device.type, DIRECT_BELOW.get("GPU", 0)),
                        f"default for a {device.type}")
    directs = lookup.candidates(device, DIRECT, None)
    if not directs:
        return _packing_stored_below(device, default)

    def direct_at(shape: tuple[int, int, int]) -> float:
        return max(lookup.expected_gflops(device, DIRECT, d, shape) for d in directs)

    wins = [math.prod(f.shape) for n in GEMM_RUNGS
            for f in lookup.candidates(device, get_rung(n), None)
            if lookup.expected_gflops(device, get_rung(n), f, f.shape) > direct_at(f.shape)]
    if not wins:
        return default
    above = min(wins)
    below = [math.prod(d.shape) for d in directs if math.prod(d.shape) < above]
    if not below:
        return Crossover(above, "measured")
    return Crossover(int(math.sqrt(max(below) * above)), "measured")


def _packing_stored_below(device: DeviceInfo, default: Crossover) -> Crossover:
    """With the direct kernel stored nowhere: the smallest product a library packing kernel
    (tiled, tiled for any size) is stored at, where that is below the type's default. A shape
    those kernels were tuned at and the direct kernel never was then runs on what was measured
    there, not on the direct kernel's defaults (a tune of the tiled kernel alone at 512 cubed
    left gemm() there on them: results/h200/crossover-no-direct); smaller products keep the
    one launch. The course's rungs are left out: a student's rung 3 tuned at 128 cubed is no
    reason to give up the direct kernel above it."""
    stored = [math.prod(f.shape) for rung in (TILED, TILED_ANY)
              for f in lookup.candidates(device, rung, None) if f.batch == 1]
    if stored and min(stored) < default.min_indirect:
        return Crossover(min(stored), "the smallest product a packing kernel is stored at")
    return default


@dataclass(frozen=True)
class Tuned:
    """The packing kernels' stored choice at a shape, and the speed it is expected to reach
    there as gemm() would run it (padded, where it is)."""

    config: Config
    gflops: float


def _tuned(device: DeviceInfo, shape: tuple[int, int, int], rejected: Rejected) -> Tuned | None:
    """The lookup chain's choice over every packing kernel (`lookup.best_over_rungs`), the
    tiled kernel reading B as it lies where that beats another kernel's pack and launch
    (`_reader_over_pack`), or the tiled kernel padded to its tiles where that is expected
    faster."""
    def accept(rung: Rung, params: Mapping[str, int]) -> bool:
        return not rejected(rung.number, params)

    found = lookup.best_over_rungs(device, shape, accept=accept)
    expected = (0.0 if found is None
                else lookup.expected_gflops(device, get_rung(found.rung), found, shape))
    reader = _reader_over_pack(device, shape, found, expected, rejected)
    if reader is not None:
        found, expected = reader
    padded = _padded_tiled(device, shape, rejected)
    if padded is not None and (found is None or padded[1] > expected):
        found, expected = padded
    return None if found is None else Tuned(from_found(found), expected)


def _reader_over_pack(device: DeviceInfo, shape: tuple[int, int, int], found: lookup.Found | None,
                      expected: float, rejected: Rejected) -> tuple[lookup.Found, float] | None:
    """The tiled kernel's best stored configuration that reads B as it lies here, where its
    one launch beats the lookup's choice run behind its pack of B: another kernel's, or one of
    the tiled kernel's that cannot read B (a cp.async pipeline). Where reading B pays
    (`read_b_pays`) gemm() runs such a configuration without the pack that every other
    configuration reads a BT from (`splits.b_pack_s`). Expected speeds are the kernels'
    alone: counting them only, a tune that raised the stored speed of the kernel for any size
    moved short-K products onto it, which then ran up to 1.6 times slower
    (results/h100/any-size-retune), and a pipeline stored at 4096x4096x128 took the products
    of K 32-128 on 2048 squares, whose calls its pack's launch lengthened by half
    (results/h100/fresh-tune/seventh). Where a tune measured the tiled kernel at this very
    shape, `behind_a_pack` has left only configurations that read B; against the direct
    kernel, `_behind_b_pack` decides."""
    if (found is None or expected <= 0 or not read_b_pays(device, shape)
            or (found.rung == TILED.number and reads_b_itself(found.params))):
        return None
    reading = next((f for f in lookup.ranked(device, TILED, shape)
                    if reads_b_itself(f.params) and not rejected(TILED.number, f.params)), None)
    if reading is None:
        return None
    speed = lookup.expected_gflops(device, TILED, reading, shape)
    if speed <= _with_b_pack(device, shape, expected):
        return None
    return reading, speed


def _behind_b_pack(device: DeviceInfo, shape: tuple[int, int, int],
                   tuned: Tuned | None) -> float | None:
    """The packing kernels' expected speed, against the direct kernel's, with the pack of B
    counted where their choice is the kernel for any size, which always runs behind one."""
    if tuned is None or tuned.gflops <= 0 or tuned.config.rung != TILED_ANY.number:
        return None if tuned is None else tuned.gflops
    return _with_b_pack(device, shape, tuned.gflops)


def _with_b_pack(device: DeviceInfo, shape: tuple[int, int, int], gflops: float) -> float:
    """A packing kernel's expected speed at a shape (above zero) with the pack of B it runs
    behind counted in its time (`splits.b_pack_s`)."""
    work = 2 * math.prod(shape) / 1e9
    return work / (work / gflops + b_pack_s(device, shape))


def padding_passes_s(device: DeviceInfo, shape: tuple[int, int, int],
                     padded: tuple[int, int, int], as_run: bool = False) -> float:
    """Seconds the passes that padding adds take at the device's memory bandwidth: A and B
    each read and written into a padded copy, and the padded product read into C (C read and
    written, for beta). With `as_run`, only the operands whose own sizes are padded, as gemm()
    runs it: one that is not is read where it lies where its layout allows. Counting every
    copy keeps the padded tiles from mid-sized products where their estimate ran ahead of
    them (results/h100/padded-split-k). On a GPU the pass over A and the epilogue are each a
    launch that the kernels reading the shape unpadded do without (all of them but the direct
    one run behind a pack of B), whose start and drain a small product's pass is shorter than
    (`splits.PACK_LAUNCH_S`): counting their bytes alone sent small products to the padded
    path's launches, where they ran below CLBlast (results/h100/shape-map)."""
    (m, n, k), (mp, np_, kp) = shape, padded
    floats, launches = mp * np_ + 2 * m * n, 1
    if not as_run or (mp, kp) != (m, k):
        floats, launches = floats + m * k + mp * kp, launches + 1
    if not as_run or (kp, np_) != (k, n):
        floats += k * n + kp * np_
    hw = hardware_for_device(device)
    return 4 * floats / (hw.mem_gbps * 1e9) + launches * launch_s_on(hw, device.backend)


def _padded_tiled(device: DeviceInfo, shape: tuple[int, int, int],
                  rejected: Rejected) -> tuple[lookup.Found, float] | None:
    """The tiled kernel's stored configuration expected fastest at a shape its tiles do not
    divide, run on the product padded to its tiles, with its speed counted on the useful
    share of that product. A panel configuration packs its panels from the caller's layout
    anyway, padding included, so padding costs it no pass; any other one pays a padded copy of
    each operand and an epilogue from the padded product (`padding_passes_s`). The lookup asks
    for configurations that divide the shape, so without this a large product one row off the
    tiles runs on the tiled kernel for any size, well below the tiled kernel padded on the H100
    (results/h100/large/README.md) and several times slower on a CPU (results/pocl/README.md).
    Its speed is expected as gemm() runs it there: K split where its tiles of C are too few
    (`tiled_split` at the padded shape), with the passes of the operands padded alone. That
    is trusted only at skinny shapes whose long operand is not padded (`_long_operand_whole`).
    Elsewhere a configuration gemm() would split there is left out and every operand's copy
    counted: at mid sizes, and at skinny ones with the long side padded, the padded tiles so
    estimated ran as slow as half what they displaced (results/h100/padded-split-k). Counted
    with K whole, few work-groups looked a full wave, and run so, 4096x48x4096 ran at a
    quarter of cuBLAS (results/h100/padded-split). An entry a more trusted level outranks at
    its own slot is not weighed: another device's configuration, hidden where this device's
    tune beat it, ran 4097 cubed 5% slower than this device's own (results/h100/large-tune-h200)."""
    m, n, k = shape
    best: tuple[lookup.Found, float] | None = None
    for f in lookup.ranked(device, TILED, shape, fit=False, outranked=False):
        if rejected(TILED.number, f.params):
            continue
        params = TILED.resolve(dict(f.params))
        padded = TILED.padded_shape(params, *shape)
        if padded == shape:
            continue  # it divides the shape: the lookup has it already
        as_run = _long_operand_whole(shape, padded)
        if not as_run and _slices_at(device, TILED.number, params, padded) > 1:
            continue
        speed = lookup.expected_gflops(device, TILED, f, padded)
        if speed <= 0:
            continue
        seconds = 2 * math.prod(padded) / (speed * 1e9)
        if not params["PANELS"]:
            seconds += padding_passes_s(device, shape, padded, as_run)
        useful = 2 * m * n * k / seconds / 1e9
        if best is None or useful > best[1]:
            best = (f, useful)
    return best


def _long_operand_whole(shape: tuple[int, int, int], padded: tuple[int, int, int]) -> bool:
    """Whether a skinny product (`skinny_class`) is padded on its short side and K alone, so
    that its long operand, whose one read is the product's work, is read where it lies."""
    (m, n, k), (mp, np_, kp) = shape, padded
    if not skinny_class(shape):
        return False
    return (mp, kp) == (m, k) if short_is_n(m, n) else (kp, np_) == (k, n)


def direct_config(device: DeviceInfo, shape: tuple[int, int, int], rejected: Rejected = never,
                  batch: int = 1) -> tuple[Config, lookup.Found | None] | None:
    """The direct kernel's configuration: stored, else its defaults for the device type; None
    where neither fits the device. With `batch` above 1, for a stack of that many products of
    `shape` in one launch (a stack's own entries first: `lookup.ranked`)."""
    found = lookup.best(device, DIRECT, shape, batch=batch)
    if found is not None and not rejected(DIRECT.number, found.params):
        return from_found(found), found
    params = DIRECT.resolve(DIRECT_CPU_DEFAULTS if device.is_cpu else None)
    if (DIRECT.first_violation(params, device.limits()) is not None
            or rejected(DIRECT.number, params)):
        return None
    return Config(DIRECT.number, params, "default"), None


def default_config(device: DeviceInfo) -> Config:
    """The tiled kernel for any size at its defaults; where it does not fit the device, the
    highest of the other packing kernels whose defaults fit (the caller pads sizes to its
    tiles)."""
    limits = device.limits()
    order = [ANY_SIZE_RUNG] + sorted((n for n in GEMM_RUNGS if n != ANY_SIZE_RUNG), reverse=True)
    for number in order:
        rung = get_rung(number)
        params = rung.defaults()
        if rung.first_violation(params, limits) is None:
            return Config(number, params, "default")
    raise UsageError(f"no rung's default configuration fits device '{device.name}'")


def prefer_direct(device: DeviceInfo, shape: tuple[int, int, int], direct: lookup.Found | None,
                  indirect_gflops: float | None, cross: Crossover) -> bool:
    """Below the device's crossover, the direct kernel: no measurement has a packing kernel
    winning there, and one launch instead of several is what a small product's call costs
    (expected speeds know nothing of launches). Above it, where both kinds are stored, the
    higher expected speed at this shape (the packing kernels' as `Tuned` has it, with
    the pack of B counted for the kernel for any size: `_behind_b_pack`); else the
    packing kernels."""
    if shape[0] * shape[1] * shape[2] < cross.min_indirect:
        return not (direct is not None and indirect_gflops is not None
                    and _idles_units(device, direct, shape)
                    and lookup.expected_gflops(device, DIRECT, direct, shape) < indirect_gflops)
    if direct is not None and indirect_gflops is not None:
        return lookup.expected_gflops(device, DIRECT, direct, shape) >= indirect_gflops
    return False


def _idles_units(device: DeviceInfo, direct: lookup.Found, shape: tuple[int, int, int]) -> bool:
    """Whether the direct kernel's stored configuration gives this product fewer work-groups
    than a CPU has cores: a configuration measured on another CPU of the family (fewer cores)
    can leave most of this one idle, which costs more than the packing kernels' launches
    (results/xeon/idle-cores). On a GPU a small product's groups are few by nature and its call
    is the launches: the crossover stands there."""
    return device.is_cpu and lookup.group_count(device, DIRECT, direct.params, shape) < \
        device.compute_units


#: above the crossover, a product the direct kernel would split into this many slices or more has
#: too few tiles of C to fill the device with the packing kernels' larger tiles
SPLIT_OVER = 4
def split_of(device: DeviceInfo, params: Mapping[str, int], shape: tuple[int, int, int]) -> int:
    """Into how many slices the direct kernel splits K at this shape (1: none): a power of two
    dividing K, while the tiles of C times the slices stay within a few work-groups per compute
    unit. Skinny products and small results with a long K get the parallelism their few tiles
    of C lack; a slice's partial product is summed by one more launch (`reduce_splits`)."""
    m, n, k = shape
    if k < SPLIT_FROM_K:
        return 1
    tm, tn = DIRECT.output_tile(DIRECT.resolve(dict(params)))
    return slices_to_fill(device.compute_units, -(-m // tm) * -(-n // tn), k, 1)


def tiled_split(device: DeviceInfo, config: Config, shape: tuple[int, int, int]) -> int:
    """Into how many slices a packing kernel splits K at this shape (1: none), as `split_of`
    does for the direct kernel: the tiled kernels (`splits.slices_gemm_decides`), the tiled
    one at the shape padded to its tiles, which is what it runs."""
    rung = get_rung(config.rung)
    padded = rung.padded_shape(rung.resolve(dict(config.params)), *shape)
    return _slices_at(device, config.rung, config.params, padded)


def _slices_at(device: DeviceInfo, rung: int, params: Mapping[str, int],
               padded: tuple[int, int, int]) -> int:
    """The slices of K gemm() runs a packing kernel's configuration in at the product it runs
    (the shape padded to its tiles), 1 for none."""
    return slices_gemm_decides(device, rung, params, padded) or 1


def split_for(device: DeviceInfo, config: Config, shape: tuple[int, int, int]) -> int:
    """Into how many slices the kernel of `config` splits K at this shape (1: none). The skinny
    kernel's split is a tuned parameter (SPLIT), measured with its sum as gemm() runs it."""
    if config.rung == DIRECT.number:
        return split_of(device, config.params, shape)
    if config.rung == SKINNY.number:
        return k_slices(SKINNY.resolve(dict(config.params)), shape[2])
    return tiled_split(device, config, shape)


def _split_on_tiled(device: DeviceInfo, shape: tuple[int, int, int], indirect: Config,
                    rejected: Rejected) -> Config | None:
    """The tiled kernel's configuration that would split K at this shape: the packing
    kernels' choice where it is that, else the tiled kernel's own best stored one. Where
    reading B as it lies pays (`read_b_pays`), the best of those that can read it comes first:
    one that cannot (a cp.async pipeline) packs the long operand at every call, which can
    double a skinny call's time (results/h100/call/final-8a8ef43); weighing the pack against
    expected speeds measured far from the shape chose worse at two of four shapes
    (results/h100/call/split-tune)."""
    ranked = lookup.ranked(device, TILED, shape)  # its first is `lookup.best`
    first = next((f for f in ranked if not rejected(TILED.number, f.params)), None)
    candidates = [indirect] + ([] if first is None else [from_found(first)])
    splitting = [c for c in candidates if tiled_split(device, c, shape) > 1]
    if splitting and read_b_pays(device, shape) and not any(
            c.rung == TILED.number and reads_b_itself(c.params) for c in splitting):
        reading = next((f for f in ranked if not rejected(TILED.number, f.params)
                        and reads_b_itself(f.params)
                        and tiled_split(device, from_found(f), shape) > 1), None)
        if reading is not None:
            return from_found(reading)
    return splitting[0] if splitting else None


#: the fewest floats of the long operand for which the skinny kernel is considered: below it
#: one launch of anything is mostly its start, and reading the operand once saves little
SKINNY_FROM = 1 << 20


def skinny_class(shape: tuple[int, int, int], widest: int = SHORT_MAX) -> bool:
    """Whether a product is skinny: at most `widest` (and SHORT_MAX) rows or columns of C, and
    a long operand (the long side times K) of at least SKINNY_FROM floats, so that reading it is
    the work."""
    m, n, k = shape
    return min(m, n) <= min(widest, SHORT_MAX) and max(m, n) * k >= SKINNY_FROM


def _skinny(device: DeviceInfo, shape: tuple[int, int, int], rejected: Rejected,
            rivals: list[float]) -> Config | None:
    """The skinny kernel's stored configuration at a skinny shape, where its expected speed
    there is above every rival's (`rivals`). It has no defaults of its own, and runs no
    wider than the widest short side it was measured at on the device: a device runs it once a
    tune has measured it (the plain tune's plan does, at a short side of 16), and where it
    loses to the tiled kernels (wider short sides) a tune does not measure it there. The
    direct kernel's expected speed knows nothing of the splits of K it would run with, so it
    cannot draw that line itself (results/h100/call/skinny.md); the tiled kernel's counts
    them."""
    if not skinny_class(shape):
        return None
    stored = lookup.ranked(device, SKINNY, shape)  # it runs any size: every entry fits
    widest = max((min(f.shape[0], f.shape[1]) for f in stored), default=0)
    if not skinny_class(shape, widest):
        return None
    found = _nearest_short_side(shape, [f for f in stored
                                        if not rejected(SKINNY.number, f.params)])
    if found is None:
        return None
    if any(r > lookup.expected_gflops(device, SKINNY, found, shape) for r in rivals):
        return None
    return from_found(found)


def _nearest_short_side(shape: tuple[int, int, int],
                        ranked: list[lookup.Found]) -> lookup.Found | None:
    """The entry measured with the short side on the same side as this shape's and nearest in
    width; the lookup's order among equals. A reading-bound kernel's speed grows with the short
    side, so the lookup's expected speeds would hand a 16-column product the configuration
    measured at 32 (blocks of the short side twice too wide), however fast it is at 16."""
    m, n, _ = shape

    def key(f: lookup.Found) -> tuple[bool, float]:
        fm, fn = f.shape[0], f.shape[1]
        return (short_is_n(fm, fn) != short_is_n(m, n),
                abs(math.log2(max(1, min(fm, fn)) / max(1, min(m, n)))))

    return min(ranked, key=key, default=None)


def behind_a_pack(device: DeviceInfo, shape: tuple[int, int, int],
                  rejected: Rejected = never) -> Rejected:
    """`rejected`, and where gemm() runs only configurations of the tiled kernel that read B as
    it lies (`splits.reading_only`) and one of those was tuned at this very shape, every one
    that cannot: its stored speed, its kernel's alone measured elsewhere, does not count the
    pack it would run behind here, while the tune here (its space kept to such
    configurations) measured what gemm() runs. Without such a tune the expected speeds stand:
    a pipeline tuned at 768 cubed ran it with its pack faster than the reading configurations
    stored elsewhere (results/h100/read-b-launch)."""
    if not reading_only(not device.is_cpu, shape, read_b_pays(device, shape)) or not any(
            tuple(f.shape) == tuple(shape) and reads_b_itself(f.params)
            for f in lookup.candidates(device, TILED, None)):
        return rejected
    return lambda number, params: rejected(number, params) or (
        number == TILED.number and not reads_b_itself(params))


def choose_kernel(device: DeviceInfo, shape: tuple[int, int, int],
                  rejected: Rejected = never, cross: Crossover | None = None) -> Config:
    """The configuration gemm() runs at a shape, leaving out those `rejected` (and those that
    would run behind a pack of B where reading it pays: `behind_a_pack`). A skinny product runs
    on the skinny kernel where it is stored and expected fastest. Above the crossover, a
    product whose K the tiled kernel splits (long K, few tiles of C) runs there."""
    rejected = behind_a_pack(device, shape, rejected)
    tuned = _tuned(device, shape, rejected)
    indirect = tuned.config if tuned else default_config(device)
    direct = direct_config(device, shape, rejected)
    rivals = ([lookup.expected_gflops(device, DIRECT, direct[1], shape)]
              if direct and direct[1] else []) + ([tuned.gflops] if tuned else [])
    skinny = _skinny(device, shape, rejected, rivals)
    if skinny is not None:
        return skinny
    cross = cross or crossover(device)
    if math.prod(shape) >= cross.min_indirect:
        split = _split_on_tiled(device, shape, indirect, rejected)
        if split is not None:
            return split
    if direct is not None and prefer_direct(device, shape, direct[1],
                                            _behind_b_pack(device, shape, tuned), cross):
        return direct[0]
    if direct is not None and split_of(device, direct[0].params, shape) >= SPLIT_OVER:
        return direct[0]  # too few tiles of C for the packing kernels: split K instead
    return indirect
