"""Which stored configuration a device runs: a chain from its own tuning to its family's, its
type's, and the rungs' defaults, as CLBlast's database goes from device to architecture to vendor.

Levels, most trusted first (a level counts only where it holds an entry this rung can still use
here: the present parameter names, within the device's limits, able to do the shape):

1. `tuned`: this device and driver (the databases named by the device key);
2. `tuned (driver X)`: this device under another driver;
3. `family: NAME`: another device of the same family (`clgemm/devices/family.py`: NVIDIA compute capability,
   PoCL's CPU target, else vendor and type), e.g. an H100 using an H200's tuning;
4. `default: CPU` / `default: GPU`: the best of any device of this backend and type, so a CPU
   nobody tuned starts from CPU-shaped configurations rather than the rungs' GPU-shaped defaults
   (for a CPU, of the CPUs whose vectors are as wide as its own where any measured the kernel);
5. none: the caller uses the rung's own defaults (`default`).

Every database is read at every level: the user's results folder (where `clgemm tune` writes,
$CLGEMM_RESULTS where set) and the databases shipped in the package (`clgemm/tuning/`, unless
$CLGEMM_SHIPPED_TUNING is 0), two files of one device included. Their entries compete by the
speed they lead one to expect at the shape (`expected_gflops`); a level outranks a lower one
only at a slot (rung and shape) it measured itself (`ranked`): there the device's own
measurement is better evidence than another device's, but a tune of one rung at 128^3 says
nothing about 1024^3 and must not push aside the faster kernels measured there. So a tune of any
rung at any size adds choices and takes none away that it did not measure against; at the
slot it measured, its entry is expected at least as fast as the best estimate of its own
database there, which it was measured against (`_measured_here`). Files are
parsed once per modification time; one that cannot be read is skipped with one warning.
Entries of an earlier parameter set of a rung are counted as stale so the commands can say so,
never used.

Entries measured on a stack (`batch` products of one shape in one batched launch) answer only a
lookup for a stack, and a lookup for one product never sees them. For a stack they are ranked
before any entry of a single product, which is used only where no stack was measured: a stack
measured as a stack is better evidence for a stack than one product measured alone, since a
product measured alone chooses small tiles to fill the device, which a stack of them, filling it
between its products, does not need.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from clgemm.configs.database import (FORMAT, SHIPPED_SWITCH, Database, is_shipped, read_any,
                                     read_roots, shape_distance, usable_params)
from clgemm.configs import trial_record
from clgemm.configs.splits import slices_gemm_decides
from clgemm.core.errors import UsageError
from clgemm.core.files import is_regular_file, read_bytes, real_path
from clgemm.core.settings import shipped_tuning
from clgemm.devices.family import family_of, type_of_name
from clgemm.devices.hardware import cpu_vector_floats
from clgemm.rungs import GEMM_RUNGS, Rung, get_rung
from clgemm.rungs.direct import DIRECT

#: the rank of each level, best first
LEVELS = ("tuned", "driver", "family", "type")

@dataclass(frozen=True)
class StoredDevice:
    """What the chain needs to know of a database's device."""

    key: str
    backend: str
    name: str
    vendor: str
    type: str
    driver: str
    family: str


@dataclass(frozen=True)
class Found:
    """A stored configuration usable here, with the level it came from."""

    rung: int
    params: dict[str, int]
    level: str
    label: str
    shape: tuple[int, int, int]
    gflops: float
    path: Path
    #: the products measured together (1: a single product; more: a stack in one launch)
    batch: int = 1

    @property
    def rank(self) -> int:
        return LEVELS.index(self.level)


def _describe(db: Database) -> StoredDevice:
    """The device of a database: from its `meta` where recorded, else inferred from the
    provenance of its entries (databases written before `meta` existed)."""
    meta = dict(db.meta)
    prov = next((e.provenance for e in db.entries if isinstance(e.provenance, dict)), {})
    name = meta.get("name") or str(prov.get("device", db.device_key))
    vendor = meta.get("vendor") or ("NVIDIA" if "nvidia" in db.device_key else "")
    dtype = meta.get("type") or type_of_name(name, vendor)
    driver = meta.get("driver") or str(prov.get("driver", ""))
    family = meta.get("family") or family_of(db.backend, vendor, name, dtype)
    return StoredDevice(db.device_key, db.backend, name, vendor, dtype, driver, family)


_CACHE: dict[Path, tuple[tuple[int, int], Database | None, StoredDevice | None]] = {}
_WARNED: set[Path] = set()


def _read(path: Path) -> tuple[Database | None, StoredDevice | None]:
    try:
        stat = path.stat()
    except OSError:
        return None, None
    mtime = (stat.st_mtime_ns, stat.st_size)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1], cached[2]
    found: tuple[Database | None, StoredDevice | None]
    try:
        content = read_bytes(path, "tuning database")
        if FORMAT.encode() not in content[:200]:
            found = (None, None)  # another kind of JSON beside the databases (a run's record)
        else:
            db = read_any(path, content)
            found = (db, _describe(db))
    except (UsageError, OSError) as exc:  # a broken file must never break a lookup
        if path not in _WARNED:
            _WARNED.add(path)
            warnings.warn(f"clgemm: tuning database {path} skipped ({exc})", RuntimeWarning,
                          stacklevel=3)
        found = (None, None)
    _CACHE[path] = (mtime, *found)
    return found


def stored_databases(roots: Iterable[Path] | None = None) -> list[tuple[Database, StoredDevice]]:
    """Every readable database under the roots, the user's and the shipped alike: two files of
    one device are both read (their entries compete), one file reached twice once."""
    seen: set[Path] = set()
    out = []
    for root in roots if roots is not None else read_roots():
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.glob("*.json") if is_regular_file(p)):
            real = real_path(path)
            if real in seen:
                continue
            seen.add(real)
            db, who = _read(path)
            if db is not None and who is not None:
                out.append((db, who))
    return out


def read_summary(roots: Iterable[Path] | None = None) -> str:
    """Which folders the chain reads and how many databases each holds, for the messages that
    say where a device's tuning comes from."""
    given = roots is not None
    folders = list(roots) if roots is not None else read_roots()
    counts = {real_path(r): 0 for r in folders}
    for db, _ in stored_databases(folders):
        folder = real_path(db.path.parent)
        if folder in counts:
            counts[folder] += 1
    parts = []
    for root in folders:
        n = counts[real_path(root)]
        kind = "shipped with clgemm" if is_shipped(root) else "results"
        parts.append(f"{root} ({kind}: {n} database{'' if n == 1 else 's'})")
    text = "tuning databases read from " + ", ".join(parts)
    if not given and not shipped_tuning():
        text += f"; the shipped ones are not ({SHIPPED_SWITCH}=0)"
    return text


def device_level(device: Any, who: StoredDevice) -> tuple[int, str] | None:
    """The chain level at which a stored device's database applies to `device`, and its label;
    None where it does not apply (another backend, another type)."""
    if who.backend != device.backend:
        return None
    if who.key == device.key:
        return 0, "tuned"
    if who.name == device.name and who.vendor.lower() == device.vendor.lower():
        return 1, f"tuned (driver {who.driver or 'other'})"
    if who.family == device.family:
        return 2, f"family: {who.name}"
    if who.type == device.type and device.type in ("CPU", "GPU"):
        return 3, f"default: {device.type}"
    return None


#: how the labels of `device_level` below the device's own begin
BORROWED_LABELS = ("tuned (driver ", "family: ", "default: ")


def borrowed(label: str) -> bool:
    """Whether a configuration's label (`device_level`'s) names one measured on another driver
    or device, so that this compiler and runtime have never run it: "tuned" is the device's
    own, "default" the kernel's, "user" the caller's."""
    return label.startswith(BORROWED_LABELS)


def group_count(device: Any, rung: Rung, params: Mapping[str, int], shape: Sequence[int],
            split: bool = True) -> int:
    """The work-groups of one product's launch: its tiles of C, times the slices of K gemm()
    splits it into there (`splits.slices_gemm_decides`; `split` False: K whole), which fill
    the device with it."""
    (gx, gy), (lx, ly) = rung.geometry(params, shape[0], shape[1])
    slices = (slices_gemm_decides(device, rung.number, params,
                                  (int(shape[0]), int(shape[1]), int(shape[2]))) or 1
              if split else 1)
    return (gx // lx) * (gy // ly) * slices


def candidates(device: Any, rung: Rung, shape: Sequence[int] | None,
               roots: Iterable[Path] | None = None, *, batch: int = 1) -> list[Found]:
    """Every usable stored configuration of `rung` for `device`, from every database and
    level, most trusted level first (`ranked` gives the chain's order). With `batch` 1 those
    measured on one product, with more those measured on a stack of any size: the two are
    told apart, never mixed."""
    limits = device.limits()
    out: list[tuple[int, Found]] = []
    other_vectors: set[Path] = set()
    for db, who in stored_databases(roots):
        level = device_level(device, who)
        if level is None:
            continue
        rank, label = level
        if LEVELS[rank] == "type" and device.type == "CPU" and (
                cpu_vector_floats(who.name) != cpu_vector_floats(device.name)):
            other_vectors.add(db.path)
        out += [(rank, f) for f in _found_in(db, device.backend, rung, limits, shape,
                                            LEVELS[rank], label, batch > 1)]
    failed = trial_record.failed(device.key)
    if failed:  # crashed or erred here in a trial launch: never offered to this device again
        out = [(rank, f) for rank, f in out
               if trial_record.key_of(f.rung, f.params) not in failed]
    if any(f.path not in other_vectors for _, f in out):
        # A CPU's register block is sized to its vector registers: one made for 32 registers
        # of 16 floats spills on 16 of 8, so another CPU of the type counts only where none
        # with vectors of this one's width (itself, its family, the type's others) measured
        # the kernel (results/pocl/vector-width).
        out = [(rank, f) for rank, f in out if f.path not in other_vectors]
    out.sort(key=lambda rf: rf[0])
    return [f for _, f in out]


def _found_in(db: Database, backend: str, rung: Rung, limits: Any, shape: Sequence[int] | None,
              level: str, label: str, stack: bool) -> list[Found]:
    """The entries of `rung` in one database measured on `backend`, on a stack or on one
    product as `stack` says, as they run within `limits` at `shape` (those that cannot are left
    out)."""
    out = []
    for e in db.entries:
        if e.rung != rung.number or e.backend != backend or (e.batch > 1) != stack:
            continue
        p = usable_params(rung, e.params, limits, shape)
        if p is None:
            continue
        m, n, k = e.shape  # three sizes: entries that say otherwise are set apart on reading
        out.append(Found(rung.number, p, level, label, (int(m), int(n), int(k)),
                         float(e.gflops or 0.0), db.path, int(e.batch)))
    return out


def other_backends(device: Any, rung: Rung, shape: Sequence[int],
                   roots: Iterable[Path] | None = None, *, batch: int = 1) -> list[Found]:
    """Configurations of `rung` stored for this very device (same name) under another backend,
    that fit `shape` here, nearest the shape (and, for a stack of `batch` products, the count)
    first, then fastest; with `batch` above 1 those measured on stacks. The kernels are one
    source for both backends, so CUDA's measurement on an NVIDIA GPU is a starting point for
    its OpenCL tune and back; never a choice, since the two compilers differ: the tuner
    measures them first (`clgemm.tuner.plan.seeds`)."""
    limits = device.limits()
    out = []
    for db, who in stored_databases(roots):
        if who.backend != device.backend and who.name == device.name:
            out += _found_in(db, who.backend, rung, limits, shape, "other backend",
                             f"{who.backend}: {who.name}", batch > 1)
    return sorted(out, key=lambda f: (shape_distance(f.shape, shape)
                                      + abs(math.log(max(f.batch, 1) / batch)), -f.gflops))


#: how much a configuration's measured speed is trusted per unit of log-shape distance between
#: where it was measured and where it would run (e^-0.3 per factor e in one dimension): a
#: configuration measured at the very shape beats one measured 4x larger in each dimension
#: unless that one was twice as fast there
DISTANCE_DISCOUNT = 0.3


def _distance(f: Found, shape: Sequence[int], batch: int = 1) -> float:
    """How far where a configuration was measured is from where it would run: the log-shape
    distance, plus the log ratio of the products measured together to those run together (a
    stack of 100 is as far from one of 1000 as from one of 10)."""
    return shape_distance(f.shape, shape) + abs(math.log(f.batch / max(1, batch)))


#: work-groups a compute unit of each device type needs at once to run a packing kernel's large
#: tiles at full speed: a GPU's unit holding one such group waits on its memory, so a launch of
#: one group per unit is half a wave, not a full one; a CPU core runs its groups one after
#: another (results/h100/call/padded-3008). The direct kernel, tuned at the small products it
#: runs, keeps one: counted with two, its choices at 64-256 cubed on NVIDIA's OpenCL changed and
#: the calls took longer (third-opencl-* there).
RESIDENT_GROUPS = {"GPU": 2, "CPU": 1}


#: whole waves of work-groups after which the groups left over start beside the stragglers of
#: the last wave rather than after it. Counted so after one wave too, products of 320-384
#: groups on 64 x 128 tiles (one wave of two groups a unit and 56-120 more) moved onto them,
#: and their kernels took 8-10% longer than those they displaced; after two and four waves,
#: 2500x3500x4500 and 4097 cubed padded to 128 x 128 tiles ran 3% and 10% faster
#: (results/h100/wave-launch)
SPREAD_AFTER_WAVES = 2


def wave_fill(groups: int, compute_units: int, per_unit: int = 1) -> float:
    """The share of the compute units' time a launch of `groups` work-groups keeps busy when
    they run in waves of `per_unit` groups per unit: the last wave leaves units idle. With one
    group per unit, 144 groups on an H100's 132 units take two waves for 1.09 waves of work
    (0.55); 1024 take eight (0.97). After SPREAD_AFTER_WAVES whole waves, the groups left over
    are counted a unit at a time, a `per_unit`-th of a wave for each group per unit: by then
    the units come free at times far enough apart that the last groups run beside the last
    wave's stragglers. Counted as a whole wave, 4097 cubed padded to 128 x 128 tiles (four
    waves of two groups per unit and 33 groups) was expected at 0.85 of the 4096-cubed rate
    and ran at 0.96; counted so, 0.95 (results/h100/fresh-tune/seventh, padded-opencl.txt)."""
    units = max(1, compute_units)
    slots = units * max(1, per_unit)
    groups = max(1, groups)
    full, rest = divmod(groups, slots)
    if full < SPREAD_AFTER_WAVES or not rest:
        return groups / (-(-groups // slots) * slots)
    waves = full + -(-rest // units) / max(1, per_unit)
    return groups / (waves * slots)


def expected_gflops(device: Any, rung: Rung, f: Found, shape: Sequence[int],
                    batch: int = 1, split: bool = True) -> float:
    """What a stored configuration should reach at `shape` (on a stack of `batch` such
    products): its measured speed, scaled down from the share of the compute units' time its
    work-groups kept busy where it was measured to the share they keep busy here, where that
    is less (`wave_fill`, RESIDENT_GROUPS groups per unit), and discounted by how far the
    measurement is from this use (`_distance`). A 128 x 128 tile gives a 1024^2 product 64
    work-groups, half of an H100's 132 units, however fast it was at 4096^3, and a 64 x 64 tile
    gives 768^2 a second wave that is almost empty; counting only the first wave would rank
    such tiles measured at a larger shape above those measured here. A stack's products are
    one grid, so their work-groups fill the device together, and so are the slices of K gemm()
    splits a long K into, unless `split` is False."""
    units = device.compute_units
    per_unit = 1 if rung.number == DIRECT.number else RESIDENT_GROUPS.get(device.type, 1)
    here = group_count(device, rung, f.params, shape, split and batch <= 1) * max(1, batch)
    there = group_count(device, rung, f.params, f.shape, f.batch <= 1) * max(1, f.batch)
    # never above what was measured: the waves are a model, and a measurement that left units
    # idle is no evidence of the speed with all of them busy
    scale = min(1.0, wave_fill(here, units, per_unit) / wave_fill(there, units, per_unit))
    return f.gflops * scale * math.exp(-DISTANCE_DISCOUNT * _distance(f, shape, batch))


def _score(device: Any, rung: Rung, f: Found, shape: Sequence[int], batch: int = 1) -> tuple:
    return (-expected_gflops(device, rung, f, shape, batch), _distance(f, shape, batch), f.rank)


def _outranked(f: Found, found: Sequence[Found]) -> bool:
    """Whether a more trusted level measured this rung at `f`'s very slot (shape, and batch for
    a stack): that slot is then its own, whatever the two speeds (a tune measures the
    configurations the chain would run first, so what it stored beat them on this device
    there). Nothing else is hidden: entries of other slots compete by expected speed, so that a
    tune never takes away a choice it did not measure against."""
    return any(g.rank < f.rank and g.shape == f.shape and g.batch == f.batch for g in found)


def ranked(device: Any, rung: Rung, shape: Sequence[int], roots: Iterable[Path] | None = None,
           fit: bool = True, accept: Callable[[Mapping[str, int]], bool] | None = None,
           *, batch: int = 1, outranked: bool = True) -> list[Found]:
    """Every usable stored configuration of `rung` (among those `accept` takes), the chain's
    choice first: by expected speed at `shape` those no more trusted level outranks at their
    slot (`_outranked`), then the outranked ones, which `outranked` False leaves out (a caller
    that weighs every entry by its own reckoning rather than taking the first, which must not
    bring back what this device's own tune measured and beat). With `fit` False the
    configurations need not divide the shape (a caller that pads, as verify's buffer tests
    do). With `batch` above 1, for a stack of that many products: the entries measured on
    stacks, else (none stored or accepted) the order for one product of the stack."""
    where = shape if fit else None
    if batch > 1:
        stacks = [f for f in candidates(device, rung, where, roots, batch=batch)
                  if accept is None or accept(f.params)]
        if stacks:
            return _chain_order(device, rung, shape, stacks, batch, outranked)
    found = [f for f in candidates(device, rung, where, roots)
             if accept is None or accept(f.params)]
    return _chain_order(device, rung, shape, found, outranked=outranked)


def _chain_order(device: Any, rung: Rung, shape: Sequence[int], found: Sequence[Found],
                 batch: int = 1, outranked: bool = True) -> list[Found]:
    """`found` by expected speed, an entry measured at this very slot lifted to the best
    expected of its database (`_measured_here`), those a more trusted level outranks at their
    slot last (left out with `outranked` False)."""
    scores = {id(f): _score(device, rung, f, shape, batch) for f in found}
    hidden = [_outranked(f, found) for f in found]
    live = [f for f, out in zip(found, hidden) if not out]
    lifted = _measured_here(live, scores, shape, batch)
    rest = [f for f, out in zip(found, hidden) if out] if outranked else []
    return (sorted(live, key=lambda f: lifted[id(f)])
            + sorted(rest, key=lambda f: scores[id(f)]))


def _measured_here(live: Sequence[Found], scores: Mapping[int, tuple], shape: Sequence[int],
                   batch: int) -> dict[int, tuple]:
    """Each entry's score (`_score`), where it was measured at this very slot (shape and
    batch) raised to the best among the entries of its own database. A tune at a slot starts
    from the chain's first choice there (`clgemm.tuner.plan.seeds`) and stores what beat it
    in the device's database, so its entry has been measured against the best estimate that
    database gave from its other slots; an estimate is a measured speed scaled by a model of
    waves and distance that knows nothing of a launch's fixed time or of how few warps a small
    product gives a compute unit. Ranked by estimate, the direct kernel's entry of 512 cubed
    was expected at 256 cubed at 1.7 times the speed of the entry tuned there, which had
    measured it there and beaten it (results/h200/direct-step-256). Entries of other
    databases were not measured against (a newer shipped database, another device's) and keep
    competing by their estimates."""
    here = (tuple(int(s) for s in shape), max(1, batch))
    out = dict(scores)
    for f in live:
        if (f.shape, f.batch) == here:
            best = min(scores[id(g)][0] for g in live if g.path == f.path and g.rank == f.rank)
            out[id(f)] = (best, *scores[id(f)][1:])
    return out


def best(device: Any, rung: Rung, shape: Sequence[int],
         roots: Iterable[Path] | None = None, fit: bool = True, *, batch: int = 1
         ) -> Found | None:
    """The configuration of `rung` a device runs at `shape` (on a stack of `batch` such
    products): the first of `ranked`."""
    found = ranked(device, rung, shape, roots, fit, batch=batch)
    return found[0] if found else None


def best_over_rungs(device: Any, shape: Sequence[int], rungs: Iterable[int] | None = None,
                    accept: Callable[[Rung, Mapping[str, int]], bool] | None = None,
                    roots: Iterable[Path] | None = None) -> Found | None:
    """gemm()'s choice among the kernels it packs for (`GEMM_RUNGS`: the ladder and the tiled
    kernels; the direct kernel has a path of its own): each one's configuration by the chain
    (`best`), then across them the highest expected speed at this shape (`expected_gflops`),
    whatever level each came from. An entry of one rung hides nothing of another's: a tune of
    rung 3 at 128^3 leaves gemm() at 1024^3 on the tiled kernel measured there, and an H100
    whose own tiled-kernel entries are stale runs the H200's faster tiled kernel rather than
    its own rung 8."""
    pool: list[tuple[Rung, Found]] = []
    for number in sorted(rungs if rungs is not None else GEMM_RUNGS):
        rung = get_rung(number)
        found = ranked(device, rung, shape, roots,
                       accept=None if accept is None else partial(accept, rung))
        if found:
            pool.append((rung, found[0]))
    if not pool:
        return None
    return min(pool, key=lambda rf: (*_score(device, rf[0], rf[1], shape), -rf[0].number))[1]


def stale_entries(device: Any, rung: Rung, roots: Iterable[Path] | None = None) -> int:
    """How many entries of this device's own databases (levels 1-2) hold a parameter set the
    rung no longer has: measured on an earlier kernel, so never used."""
    count = 0
    for db, who in stored_databases(roots):
        level = device_level(device, who)
        if level is None or level[0] > 1:
            continue
        count += sum(1 for e in db.entries if e.rung == rung.number
                     and isinstance(e.params, dict) and rung.complete(e.params) is None)
    return count


_GENERATION = [0]


def generation() -> int:
    """A number that changes whenever what the lookup answers may have changed (`forget`):
    whoever remembers answers keeps them only while it stays the same."""
    return _GENERATION[0]


def forget() -> None:
    """Drop the parsed files, after a tune stored new results, a database was rewritten within
    one second, or the environment now names other folders; every remembered answer is stale."""
    _CACHE.clear()
    _GENERATION[0] += 1
