"""The record every kernel of `clgemm/kernels/` is described by: `Rung` with its `Param`s,
`Constraint`s and `Helper`s, and the few constraints and helpers that many rungs share.

Each record says everything the runner and the tuner need without reading the kernel: the macros
and their candidate values, the macros derived from them (computed here for the launch geometry
and the constraints; every kernel file derives the same ones itself, so only the parameters are
passed to the compiler), the named constraints, the launch geometry and the helper steps. The
records live in one module per kernel (`r01_naive.py`, ..., `direct.py`, `tiled.py`), which all
import this module and nothing from the package's `__init__`, so that importing them in any
order makes no cycle.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, cast

from clgemm.core.errors import ConstraintError, UsageError
from clgemm.core.tables import params_text
from clgemm.core.validation import is_int
from clgemm.devices.limits import DeviceLimits

Params = Mapping[str, int]

#: Order in which constraint stages are applied (the tuner's pruning funnel uses the same order).
STAGES = ("divisibility", "device", "heuristic")
#: what a constraint raises on parameter values it cannot judge (a zero it divides by, a value
#: of a type it cannot compare): the configuration counts as breaking it. Anything else (a name
#: or an attribute the constraint misspells) is a fault of the constraint, and is raised.
VALUE_ERRORS: tuple[type[Exception], ...] = (ArithmeticError, TypeError, ValueError)


@dataclass(frozen=True)
class Param:
    """One tunable macro: its candidate values for the tuner and its default for the ladder."""

    name: str
    candidates: tuple[int, ...]
    default: int
    meaning: str
    #: smallest allowed value (0 for paddings and on/off switches)
    minimum: int = 1
    #: a variant of every configuration rather than a dimension of the tile (the order of the
    #: tiles, of the work-items): its default is neutral, legal wherever any value is, so the
    #: tuner's space is built without it and each legal configuration then widened by its values
    variant: bool = False
    #: how wide a work-item's reads into its registers are (register vectors), not what it
    #: computes: the tuner tries a good configuration with each other value of it early,
    #: since the fastest width depends on the device's widest load and its banks
    read_width: bool = False


@dataclass(frozen=True)
class Constraint:
    """A named predicate over a parameter set (and, for device constraints, the device)."""

    name: str
    stage: str
    holds: Callable[[Params, DeviceLimits], bool]

    def holds_on(self, params: Params, limits: DeviceLimits | None) -> bool:
        """Whether the parameters keep the constraint on a device of these `limits`. Without a
        device (None) only a divisibility constraint can be judged, since it reads the
        parameters alone; any other stage is left to the time a device is known, and counts
        as kept until then."""
        if limits is not None:
            return self.holds(params, limits)
        if self.stage != "divisibility":
            return True
        # Divisibility predicates never read their device argument (`divisible`, the range
        # constraint, the rungs' own), so asking one without a device is safe.
        params_only = cast(Callable[[Params, DeviceLimits | None], bool], self.holds)
        return params_only(params, None)


@dataclass(frozen=True)
class Helper:
    """A preparatory kernel a rung needs, with its own tile macros (timed apart from the rung)."""

    name: str
    file: str
    kernel: str
    macros: Mapping[str, int]
    local_size: tuple[int, int]
    #: the operand it rewrites for the rung ("A" or "B")
    operand: str = "B"


TRANSPOSE_B = Helper(name="transpose B", file="helpers.cl", kernel="transpose",
                     macros={"TRX": 16, "TRY": 16}, local_size=(16, 16))


def _range_constraint(rung: "Rung") -> Constraint:
    def in_range(p: Params, d: DeviceLimits) -> bool:
        return all(p[q.name] >= q.minimum for q in rung.params)

    return Constraint("parameters within their minimum values", "divisibility", in_range)


def _device_constraints(rung: "Rung") -> tuple[Constraint, ...]:
    def wg_size(p: Params, d: DeviceLimits) -> bool:
        return math.prod(rung.local_size(p)) <= d.max_work_group_size

    def item_sizes(p: Params, d: DeviceLimits) -> bool:
        return all(s <= m for s, m in zip(rung.local_size(p), d.max_work_item_sizes))

    def local_mem(p: Params, d: DeviceLimits) -> bool:
        return rung.local_mem_bytes(p) <= d.local_mem_bytes

    return (
        Constraint("work-group size <= device maximum", "device", wg_size),
        Constraint("work-group sides <= device maximum work-item sizes", "device", item_sizes),
        Constraint("local memory <= device local memory", "device", local_mem),
    )


@dataclass(frozen=True)
class Rung:
    number: int
    slug: str
    title: str
    adds: str
    file: str
    kernel: str
    params: tuple[Param, ...]
    #: derived macros from the parameters (only called once divisibility holds)
    derive: Callable[[Params], dict]
    #: divisibility and rung-specific device/heuristic constraints
    constraints: tuple[Constraint, ...]
    #: work-group shape (dimension 0 runs along M)
    local_size: Callable[[Params], tuple[int, int]]
    #: rows and columns of C that one work-group computes
    output_tile: Callable[[Params], tuple[int, int]]
    #: K must be a multiple of this (1 for rungs that handle any K)
    k_step: Callable[[Params], int]
    local_mem_bytes: Callable[[Params], int]
    transposed_b: bool = False
    any_size: bool = False
    helpers: tuple[Helper, ...] = ()
    #: helpers that only some configurations need, after `helpers` (e.g. packing into panels)
    extra_helpers: Callable[[Params], tuple[Helper, ...]] | None = None
    #: the parameters `extra_helpers` reads (empty: any of them may count), so that a space of
    #: many configurations is asked once per distinct helper set
    helper_params: tuple[str, ...] = ()
    teaches: str = ""
    extra: Mapping[str, object] = field(default_factory=dict)
    #: the kernel's arguments for C := A B on tight column-major buffers, where they are not the
    #: rungs' (M, N, K, A, B, C): the direct kernel's BLAS-style list
    launch_args: Callable[[int, int, int, object, object, object], list] | None = None
    #: (global, local) sizes of a launch for an M x N output where one work-group is not one
    #: tile of C (the skinny kernel: which side is short decides the grid)
    launch_geometry: Callable[[Params, int, int],
                              tuple[tuple[int, int], tuple[int, int]]] | None = None
    #: into how many slices of K a configuration runs at this K (1: none): its batched form
    #: (BATCHED=1) over the slices, then the sum of the slices (the skinny kernel's SPLIT)
    k_slices: Callable[[Params, int], int] | None = None
    #: the batched form's arguments for C := A B on tight column-major buffers with K in slices
    #: of `depth` (M, N, K, depth, A, B, the partial products)
    slice_args: Callable[[int, int, int, int, object, object, object], list] | None = None
    #: for a rung that takes any K, the multiple of which its slices are deep (all but the last,
    #: which takes what is left); None: the slices divide K evenly
    slice_step: Callable[[Params], int] | None = None
    #: the batched form's arguments for a stack of COUNT products C_z := A_z B_z, the tight
    #: column-major matrices of each operand one after the other (M, N, K, COUNT, A, B, C);
    #: None where the rung has no batched form for stacks
    stack_args: Callable[[int, int, int, int, object, object, object], list] | None = None
    #: macros the batched form for stacks takes beyond BATCHED (the tiled kernel's B read as it
    #: lies, one K x N matrix per product)
    stack_macros: Mapping[str, int] = field(default_factory=dict)
    #: which configurations have that form (None: all): the tuner measures only those on a
    #: stack
    stack_accepts: Callable[[Params], bool] | None = None
    #: into how many slices of K along its second dimension one work-group is cut (the tiled
    #: kernel's KSPLIT; None: one): the work-items of one slice hold a block of outputs each
    group_slices: Callable[[Params], int] | None = None
    #: whether the tuner's tile heuristics (register reuse, work-groups per compute unit)
    #: judge this kernel: not for one that spreads K over the work-items of a group
    tile_heuristics: bool = True
    #: parameter sets by name that, with the defaults, take each path of the kernel (its
    #: switches, blocks that the sizes cut short): a compiler can get one path wrong and not
    #: the others, so verify runs every one of them
    forms: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def args(self, m: int, n: int, k: int, a: object, b: object, c: object) -> list:
        """The arguments of one launch computing C := A B (M x N x K, tight, column-major)."""
        return self.launch_args(m, n, k, a, b, c) if self.launch_args else [m, n, k, a, b, c]

    def slice_local_size(self, params: Params) -> tuple[int, int]:
        """The work-items of one slice of a work-group (`group_slices`): the whole group where
        it is not cut."""
        rows, cols = self.local_size(params)
        return rows, cols // (self.group_slices(params) if self.group_slices else 1)

    def slice_depth(self, params: Params, k: int, slices: int) -> int:
        """How deep each slice of K is where the batched form runs K in `slices`: an even
        share where the slices divide K; for a rung that takes any K, the share rounded up to
        whole tiles, so that only the last slice has a partial tile."""
        if self.slice_step is None:
            return k // slices
        share, step = -(-k // slices), self.slice_step(params)
        return -(-share // step) * step

    # -- parameters ---------------------------------------------------------------------------
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def defaults(self) -> dict[str, int]:
        return dict(self._defaults)

    @functools.cached_property
    def _defaults(self) -> dict[str, int]:
        """Built once: `resolve` runs for every configuration of a tuner's funnel, a million
        at some shapes, and copying a dict costs a fraction of building one."""
        return {p.name: p.default for p in self.params}

    def resolve(self, overrides: Mapping[str, int] | None = None) -> dict[str, int]:
        """Defaults with overrides applied; unknown names and non-positive values are refused."""
        params = self.defaults()
        for name, value in (overrides or {}).items():
            if name not in params:
                raise UsageError(f"rung {self.number} has no parameter {name} "
                                 f"(it has {', '.join(self.param_names()) or 'none'})")
            # a plain int is known by its type at once, the common case by far (the funnels)
            plain = type(value) is int
            if not plain and (isinstance(value, bool) or not isinstance(value, int)) or value < 0:
                raise UsageError(f"rung {self.number}: parameter {name} must be a "
                                 f"non-negative integer, got {value!r}")
            params[name] = value
        return params

    def complete(self, params: object) -> dict[str, int] | None:
        """A stored parameter set (a tuning entry, a journal record) as this rung reads it now,
        or None if it no longer applies. A parameter added to a rung defaults to the kernel it
        had before, so a set without it is completed with that default; a set naming a parameter
        the rung no longer has was measured on a different kernel and does not apply. Values
        must be integers as stored: 32.9, True or "32" are not read as some integer, because
        a set that says something else was not written by clgemm and is not to be trusted."""
        names = self.param_names()
        if not isinstance(params, Mapping) or not set(params) <= set(names):
            return None
        if not all(is_int(v) for v in params.values()):
            return None
        return {n: int(params[n]) if n in params else self.defaults()[n] for n in names}

    def helpers_for(self, params: Params) -> tuple[Helper, ...]:
        """Every helper step this configuration needs, in the order they run."""
        return self.helpers + (self.extra_helpers(params) if self.extra_helpers else ())

    def macros(self, params: Params) -> dict[str, int]:
        """The -D macros of a configuration: its parameters alone. Each kernel file derives the
        rest itself (RTSM, LPTA, ...), the same way `derive` does here, so a file also builds
        with no options at all and the two can be compared (tests/test_rungs_files.py)."""
        return dict(params)

    def all_macros(self, params: Params) -> dict[str, int]:
        """The parameters and what derives from them: every macro the kernel sees."""
        return {**params, **self.derive(params)}

    # -- constraints --------------------------------------------------------------------------
    def all_constraints(self) -> tuple[Constraint, ...]:
        """Every constraint, in funnel order (stable within a stage). The minimum values come
        after the rung's own divisibility: they read every parameter, so the tuner can apply
        them only once its variants are added, and by then the rung's own have thinned the
        configurations they multiply."""
        every = self.constraints + (_range_constraint(self),) + _device_constraints(self)
        return tuple(sorted(every, key=lambda c: STAGES.index(c.stage)))

    def first_violation(self, params: Params, limits: DeviceLimits | None,
                        stages: tuple[str, ...] = ("divisibility", "device")) -> Constraint | None:
        """The first constraint the configuration breaks, in funnel order, or None; without
        `limits`, only those that need no device (`Constraint.holds_on`)."""
        for c in self.all_constraints():
            if c.stage in stages and not c.holds_on(params, limits):
                return c
        return None

    def validate(self, params: Params, limits: DeviceLimits | None = None) -> None:
        bad = self.first_violation(params, limits)
        if bad is not None:
            raise ConstraintError(self.number, bad.name, params)

    # -- sizes and geometry -------------------------------------------------------------------
    def size_multiples(self, params: Params) -> tuple[int, int, int]:
        if self.any_size:
            return (1, 1, 1)
        tm, tn = self.output_tile(params)
        return (tm, tn, self.k_step(params))

    def padded_shape(self, params: Params, m: int, n: int, k: int) -> tuple[int, int, int]:
        """The product the rung runs for M x N x K: each size rounded up to its multiple."""
        tm, tn, tk = self.size_multiples(params)
        return (-(-m // tm) * tm, -(-n // tn) * tn, -(-k // tk) * tk)

    def size_problem(self, params: Params, m: int, n: int, k: int) -> str | None:
        """Why this rung cannot do an M x N x K product with these parameters, or None."""
        for dim, value, mult in zip("MNK", (m, n, k), self.size_multiples(params)):
            if value % mult:
                return f"{dim}={value} is not a multiple of {mult}"
        return None

    def geometry(self, params: Params, m: int, n: int) -> tuple[tuple[int, int], tuple[int, int]]:
        """Global and local sizes of the launch for an M x N output."""
        if self.launch_geometry is not None:
            return self.launch_geometry(params, m, n)
        local = self.local_size(params)
        tm, tn = self.output_tile(params)
        groups = (-(-m // tm), -(-n // tn))
        return (groups[0] * local[0], groups[1] * local[1]), local

    def params_text(self, params: Params) -> str:
        return params_text(params)


def divisible(name: str, a: str, b: str) -> Constraint:
    """Constraint '<a> % <b> == 0' named by the user-facing `name`."""
    return Constraint(name, "divisibility", lambda p, d: p[b] > 0 and p[a] % p[b] == 0)
