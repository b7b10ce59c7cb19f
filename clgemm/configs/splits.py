"""Into how many slices gemm() splits K, where the tiled kernel reads B as it lies, and where
the one for any size has its operands packed whole vectors apart: the arithmetic that the choice
of kernel, the expected speeds of stored configurations (a split multiplies the work-groups that
fill the device), the tuner's measurements, the bound and gemm()'s plans need, kept apart so
that the lookup can count it without the choice above it."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from clgemm.devices.hardware import Hardware, hardware_for_device
from clgemm.rungs.tiled import TILED, reads_b_itself
from clgemm.rungs.tiled_any import TILED_ANY

#: a split of K keeps each slice at least this deep, so the partial products stay few and each
#: slice's loop long enough to hide its loads
MIN_SLICE = 256
#: the shortest K that is split to fill the device: a split costs one more launch (the sum of
#: the slices), which a short K does not repay where every compute unit already has work
SPLIT_FROM_K = 2048
#: work-groups per compute unit a split aims for: one group per unit leaves most of its lanes
#: waiting on memory
GROUPS_PER_UNIT = 4
#: below SPLIT_FROM_K the tiled kernel splits K only where its tiles of C leave more than half
#: the compute units without a work-group, and only until each unit has this many: 128 x 128
#: tiles split in four beat 64 x 64 tiles whole at 1024 cubed on the H100 (64 tiles on 132
#: units), while calls whose split tiles filled three quarters of the units or more took 9-21%
#: longer (results/h100/split-tune, results/h100/short-k-split)
SHORT_K_GROUPS_PER_UNIT = 2
#: the fewest rows of C the tiled kernel splits K for where it would pack B: a C-ordered call
#: packs the long operand into BT first (K x N floats, read and written once), which on a
#: thinner product costs more than the direct kernel's reads in place save
#: (results/h100/call/tune-medium.md); a configuration that reads B as it lies there is split
#: whatever the rows
MIN_SPLIT_ROWS = 64


def slices_to_fill(compute_units: int, groups: int, k: int, depth_step: int,
                   per_unit: int = GROUPS_PER_UNIT, any_count: bool = False) -> int:
    """The most slices of equal depth, each a multiple of `depth_step` and at least MIN_SLICE
    deep, that keep `groups` work-groups per slice within `per_unit` per compute unit: a power
    of two, or with `any_count` any count that divides K's steps. The tiled kernel's batched
    form runs one slice per batch entry, so it takes any count: held to powers of two, a K of
    16000 (1,000 tiles of 16) split in 8 at most, which left 384x128x16000 with 48
    work-groups on an H100's 132 units, far behind cuBLAS (results/h100/shape-map,
    results/h100/launch-split)."""
    if k % depth_step:
        return 1
    steps = k // depth_step
    most = min(per_unit * compute_units // max(groups, 1), k // MIN_SLICE, steps)
    return next((s for s in range(most, 1, -1)
                 if steps % s == 0 and (any_count or s & (s - 1) == 0)), 1)


def tiled_slices(compute_units: int, params: Mapping[str, int],
                 shape: tuple[int, int, int], reads_b: bool = False) -> int:
    """Into how many slices the tiled kernel splits K at this shape on a device of so many
    compute units (1: none): through local memory only (its batched form runs the slices;
    panels lie whole along K), at multiples of its tiles, where its tiles of C are too few to
    fill the device; along a K shorter than SPLIT_FROM_K only where they leave most units
    idle (SHORT_K_GROUPS_PER_UNIT). A slice's depth stays a multiple of the tile depth; fewer
    than MIN_SPLIT_ROWS rows of C are split only where the kernel `reads_b` as it lies. The tuner
    measures a configuration so split where gemm() would split it, so its ranking is
    gemm()'s."""
    m, n, k = shape
    if params.get("PANELS") or (m < MIN_SPLIT_ROWS and not reads_b):
        return 1
    tm, tn, tk = TILED.size_multiples(TILED.resolve(dict(params)))
    if m % tm or n % tn or k % tk:
        return 1
    groups = (m // tm) * (n // tn)
    return slices_to_fill(compute_units, groups, k, tk, groups_per_unit(compute_units, groups, k),
                          any_count=True)


def groups_per_unit(compute_units: int, groups: int, k: int) -> int:
    """The work-groups per compute unit a split of K may fill the device up to, for `groups`
    tiles of C: GROUPS_PER_UNIT along a long K; along a K shorter than SPLIT_FROM_K,
    SHORT_K_GROUPS_PER_UNIT where the tiles leave more than half the units idle, else 0 (no
    split)."""
    if k >= SPLIT_FROM_K:
        return GROUPS_PER_UNIT
    return SHORT_K_GROUPS_PER_UNIT if 2 * groups <= compute_units else 0


def any_size_slices(compute_units: int, params: Mapping[str, int],
                    shape: tuple[int, int, int]) -> int:
    """Into how many slices the tiled kernel for any size splits K at this shape (1: none):
    where its tiles of C, the last ones partial, are too few to fill the device, by the rule
    `tiled_slices` follows. Its slices are whole tiles deep but the last (`Rung.slice_depth`),
    so no size has to divide K; each but the last is at least MIN_SLICE deep. It always reads a
    packed BT, so fewer than MIN_SPLIT_ROWS rows of C are never split."""
    m, n, k = shape
    if m < MIN_SPLIT_ROWS:
        return 1
    p = TILED_ANY.resolve(dict(params))
    groups = -(-m // p["TSM"]) * -(-n // p["TSN"])
    per_unit = groups_per_unit(compute_units, groups, k)
    split = 1
    while (groups * split * 2 <= per_unit * compute_units
           and TILED_ANY.slice_depth(p, k, split * 2) >= MIN_SLICE):
        split *= 2
    # rounded up to whole tiles, the slices may cover K in fewer than `split`
    return -(-k // TILED_ANY.slice_depth(p, k, split))


#: what reading B as it lies (the tiled kernel's BT_FROM_B) costs the kernel, as a share of its
#: time with a packed BT: its B tiles are gathered down columns instead of along rows
#: (results/h100/call/bt-from-b.md has the measurements)
READ_B_COST = 0.1


def read_b_pays(device: Any, shape: tuple[int, int, int]) -> bool:
    """Whether the tiled kernel should read B as it lies at this shape rather than a BT packed
    first. The pack reads and writes all of B once, at the device's memory bandwidth; reading B
    itself slows the product by READ_B_COST of its time at the device's peak. The pack wins on
    products with many rows of C (a square), reading B on those with few: there a C-ordered
    call would transpose its whole long operand for little work."""
    return read_b_pays_on(hardware_for_device(device), shape, device.backend)


def read_b_pays_for_tune(device: Any, shape: tuple[int, int, int]) -> bool:
    """`read_b_pays` with the least launch figure for the device type, whatever its backend:
    where a tune keeps its space to the configurations that read B (`reading_only`). A long
    kernel hides most of its pack's launch: through OpenCL a pipeline at 4096x4096x128 took 1-2
    us beyond its kernel with its pack, not the 11 a short one's call pays
    (results/h100/wave-launch), and a space kept to readers there would leave out the pipeline
    the tunes measured fastest. gemm() weighs the two with the backend's own figure."""
    return read_b_pays_on(hardware_for_device(device), shape)


#: what a pass's launch of its own costs a call beside its bytes, in seconds, by device type and
#: backend. On CUDA the pack of a 512 x 512 B (1 MiB, 0.6 us at the H100's bandwidth)
#: lengthened gemm()'s launches by 4.1 us (results/h100/call/tiled-512). Through NVIDIA's
#: OpenCL a call's second launch took 11-13 us more than one launch: 512 cubed's host work
#: there (results/h100/call/tiled-512), and 2048x2048x32 on a pipeline behind its pack, 11 us
#: beyond its kernel (results/h100/device-all/plain). Left out on CPUs, where no measurement
#: puts a figure on it.
PACK_LAUNCH_S = {("GPU", "cuda"): 3.5e-6, ("GPU", "opencl"): 11e-6}


def read_b_pays_on(hw: Hardware, shape: tuple[int, int, int], backend: str = "") -> bool:
    """`read_b_pays` with the device's figures given. On a GPU the pack is a launch of its
    own, whose start and drain take longer than a small product's pack itself: counting the pass
    alone made the pack look cheap on exactly the products whose calls it lengthens most. It is
    counted along a K too short to split only: along a long K, where the tiled kernel splits
    K, pipelines repaid their pack's launch at 32 and 64 rows of C while configurations reading
    B lost 10-25% (results/h100/read-b-launch)."""
    m, n, k = shape
    return b_pack_s_on(hw, shape, backend) > READ_B_COST * 2 * m * n * k / (hw.peak_gflops * 1e9)


def b_pack_s(device: Any, shape: tuple[int, int, int]) -> float:
    """Seconds the pack of B into BT adds to a call at this shape (`b_pack_s_on`)."""
    return b_pack_s_on(hardware_for_device(device), shape, device.backend)


def b_pack_s_on(hw: Hardware, shape: tuple[int, int, int], backend: str = "") -> float:
    """Seconds the pack of B into BT adds to a call: a pass reading and writing B at the
    device's memory bandwidth and, on a GPU along a K too short to split, its launch
    (PACK_LAUNCH_S; `read_b_pays_on` says why only there)."""
    _, n, k = shape
    pack_s = pass_s_on(hw, n, k)
    if k < SPLIT_FROM_K:
        pack_s += launch_s_on(hw, backend)
    return pack_s


def launch_s_on(hw: Hardware, backend: str = "") -> float:
    """Seconds a pass's launch of its own adds beside its bytes (PACK_LAUNCH_S). A backend
    with no figure of its own, or none named (the bound, which knows the hardware alone),
    takes the least figure for the device type: counting a launch dearer than measured moves
    products off the packs on no evidence."""
    own = PACK_LAUNCH_S.get((hw.device_type, backend))
    if own is not None:
        return own
    return min((s for (kind, _), s in PACK_LAUNCH_S.items() if kind == hw.device_type),
               default=0.0)


def pass_s_on(hw: Hardware, rows: int, cols: int) -> float:
    """Seconds a pack's pass over a rows x cols operand takes at the device's memory bandwidth:
    each float read and written once."""
    return 2 * 4 * rows * cols / (hw.mem_gbps * 1e9)


#: what reading A or BT one float at a time costs the tiled kernel for any size, as a share of
#: the product's time at the device's peak: 999 and 1001 cubed took 13 us more than 1000 cubed
#: (78.5 against 65.6 us a call on the H100, both backends alike), where the product at the
#: H100's peak takes 30 (results/h100/any-size-1000)
SCALAR_READ_COST = 0.4


def padding_pays(device: Any, shape: tuple[int, int, int], extra_rows: Sequence[int]) -> bool:
    """Whether the tiled kernel for any size should read its operands packed with columns whole
    vectors apart (its PADDED_LD) where M or N is off its vector width, given the rows of the
    operands that would be packed for that alone (`extra_rows`; the others are packed anyway)."""
    return padding_pays_on(hardware_for_device(device), shape, extra_rows, device.backend)


def padding_pays_on(hw: Hardware, shape: tuple[int, int, int], extra_rows: Sequence[int],
                    backend: str = "") -> bool:
    """`padding_pays` with the device's figures given. Off the vector width the kernel reads
    the operand float by float, which costs it SCALAR_READ_COST of the product's time at the
    peak; an extra pack reads and writes its operand once at the memory bandwidth, in a launch
    of its own. Measured on a GPU only: elsewhere the operands are read as they come."""
    if hw.device_type != "GPU":
        return False
    m, n, k = shape
    pack_s = sum(pass_s_on(hw, rows, k) + launch_s_on(hw, backend) for rows in extra_rows)
    return pack_s < SCALAR_READ_COST * 2 * m * n * k / (hw.peak_gflops * 1e9)


def reading_only(gpu: bool, shape: tuple[int, int, int], pays: bool) -> bool:
    """Whether only configurations of the tiled kernel that read B as it lies are measured at
    this shape (`pays`: `read_b_pays` there), and chosen where such a measurement was stored
    (`choice.behind_a_pack`): on a GPU, where reading B pays. One that cannot read B runs
    behind a pack at every call, which its kernel's measured speed does not count; where the
    pack costs more than reading B would, a stored speed without it ranks such a
    configuration above what gemm() runs faster (results/h100/read-b-launch)."""
    return gpu and pays


def reads_b_with(params: Mapping[str, int], pays: bool) -> bool:
    """Whether gemm() has a configuration of the tiled kernel read B (a C-ordered call's A)
    where it lies, `pays` being `read_b_pays` at the shape. One that stages B through local
    memory does so where it pays. One that reads B straight from global memory always does:
    down B's columns each work-item walks WPTN streams of consecutive floats, where from a
    packed BT it would read one float per row of BT, a new page at every step of k on a large
    product; so B as it lies is the faster form as well as the one without a pack
    (results/pocl/b-as-it-lies.txt)."""
    if not reads_b_itself(params):
        return False
    return pays or not TILED.resolve(dict(params))["CACHE_B"]


def reads_b_as_gemm(device: Any, rung: int, params: Mapping[str, int],
                    shape: tuple[int, int, int]) -> bool:
    """Whether gemm() has a configuration of kernel `rung` read B as it lies at this shape
    (`reads_b_with`), so that measuring it there reads B so too."""
    return rung == TILED.number and reads_b_with(params, read_b_pays(device, shape))


def slices_gemm_decides(device: Any, rung: int, params: Mapping[str, int],
                        shape: tuple[int, int, int]) -> int | None:
    """Into how many slices gemm() splits K for a configuration of kernel `rung` on `device`
    where gemm() decides them (the tiled kernel, `tiled_slices`, counting whether it reads B as
    it lies there; the one for any size, `any_size_slices`); None where the configuration says
    itself (`Rung.k_slices`) or K stays whole."""
    if rung not in (TILED.number, TILED_ANY.number):
        return None
    pays = rung == TILED.number and read_b_pays(device, shape)
    return slices_of_rung(rung, device.compute_units, params, shape, pays)


def slices_of_rung(rung: int, compute_units: int, params: Mapping[str, int],
                   shape: tuple[int, int, int], pays: bool) -> int:
    """Into how many slices gemm() splits K for a configuration of kernel `rung` (the tiled
    kernel, `slices_as_gemm`, or the one for any size, `any_size_slices`; others: 1), given
    the device's compute units and whether reading B as it lies pays there: for the tuner's
    space and the bound, which know the device's figures but not the device."""
    if rung == TILED.number:
        return slices_as_gemm(compute_units, params, shape, pays)
    if rung == TILED_ANY.number:
        return any_size_slices(compute_units, params, shape)
    return 1


def slices_as_gemm(compute_units: int, params: Mapping[str, int], shape: tuple[int, int, int],
                   pays: bool) -> int:
    """`tiled_slices` for a configuration of the tiled kernel as gemm() runs it where reading B
    as it lies pays or not (`read_b_pays`, given by whoever knows the device's figures): the
    one count gemm(), the tuner's space and the bound share."""
    return tiled_slices(compute_units, params, shape, reads_b_with(params, pays))
