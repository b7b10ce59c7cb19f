"""The settings of one tune, whoever asks for it: `clgemm tune` parses its options into a
`TuneSettings`, `clgemm.tune()` makes one from its arguments, and both hand it to the same
`tune_run.Tuning`.

Every value is checked here and nowhere else, when the settings are made, so the command and a
Python program refuse the same mistakes before a device is opened; a message names the caller's
own choice (the command's option, the function's keyword) as the settings' `Wording` says. The
one check that needs the plan, a parameter of `only` that none of the planned rungs has, is
`TuneSettings.only_among`, here too.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from clgemm.backends import registry
from clgemm.core.errors import ArgumentTypeError, UsageError
from clgemm.core.problem import Problem, parse_sizes
from clgemm.devices.info import DeviceInfo
from clgemm.rungs import get_rung, parse_rungs
from clgemm.tuner.journal import PYTHON, Wording
from clgemm.tuner.rung_tune import TuneOptions
from clgemm.tuner.strategies import make_strategy

#: the counts and times of a tune, each with whether 0 means something (no pre-building
#: process, no confirmation, no warm-up) or is as meaningless as a negative number
_NUMBERS = (("seconds", False), ("budget", False), ("confirm", True), ("repeats", False),
            ("warmup", True), ("jobs", True), ("launch_timeout", False),
            ("build_timeout", False), ("workers", False))

#: `cluster`'s value for a cluster started on this machine
LOCAL = "local"


@dataclass(frozen=True)
class TuneSettings:
    """Every choice of one tune, checked when the settings are made. `device` stays as given
    (an index, a part of a name, a DeviceInfo; None: $CLGEMM_DEVICE's, else the first CPU
    device) until the run is planned; None in `rungs` or `shapes`: the plan's; None in
    `results`: $CLGEMM_RESULTS or the per-user data folder, read when the run starts. `command`
    (the provenance journals and the database record) and `wording` say who asked, not what is
    to be done, so settings that differ only in them are equal."""

    device: DeviceInfo | str | int | None = None
    backend: str | None = None
    rungs: tuple[int, ...] | None = None
    shapes: tuple[Problem, ...] | None = None
    seconds: float | None = None
    budget: int | None = None
    exhaustive: bool = False
    strategy: str = "auto"
    only: dict[str, tuple[int, ...]] = field(default_factory=dict)
    heuristics: bool = True
    seed: int = 0
    confirm: int = 3
    repeats: int | None = None
    warmup: int | None = None
    jobs: int | None = None
    fresh: bool = False
    resume: bool = False
    journal: Path | None = None
    database: Path | None = None
    results: Path | None = None
    launch_timeout: float = 30.0
    build_timeout: float = 300.0
    #: the Dask cluster the evaluations are spread over: LOCAL (one started on this machine)
    #: or a scheduler's address; None: this process's own measuring process, as without Dask
    cluster: str | None = None
    #: a local cluster's workers (None: one per device of the tuned model)
    workers: int | None = None
    #: (part, parts): this run measures that part of its steps (`plan.share_of`), the others
    #: going to identical devices tuned at once into the same database (`tune --device all`)
    share: tuple[int, int] | None = None
    command: str = field(default="", compare=False)
    wording: Wording = field(default=PYTHON, compare=False)

    def __post_init__(self) -> None:
        for name, allow_zero in _NUMBERS:
            self._check_number(name, getattr(self, name), allow_zero)
        say = self.wording
        if sum(x is not None for x in (self.budget, self.seconds)) + bool(self.exhaustive) > 1:
            raise UsageError(f"give one of {say.name('budget')}, {say.name('seconds')} and "
                             f"{say.name('exhaustive')}, not several")
        if not isinstance(self.strategy, str):
            raise ArgumentTypeError(f"{say.given('strategy', self.strategy)}: give a "
                                    f"strategy's name")
        if self.strategy.strip().lower() != "auto":  # refused now, not after the first rung
            make_strategy(self.strategy, say.given("strategy", self.strategy))
        if self.fresh and self.resume:
            raise UsageError(f"{say.flag('fresh')} starts the journals over and "
                             f"{say.flag('resume')} continues them: give one of them")
        if self.cluster is not None and (not isinstance(self.cluster, str)
                                         or not self.cluster.strip()):
            raise UsageError(f"{say.given('cluster', self.cluster)}: give a scheduler's "
                             f"address (tcp://HOST:PORT) or {LOCAL!r}")
        if self.workers is not None and self.cluster != LOCAL:
            raise UsageError(f"{say.name('workers')} sets the workers of a local cluster: "
                             f"give it with {say.given('cluster', LOCAL)}")
        for name, values in self.only.items():
            if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < 0
                                 for v in values):
                raise UsageError(f"{only_shown(self.wording, name, values)}: give "
                                 f"non-negative integers")

    def _check_number(self, name: str, value: Any, allow_zero: bool) -> None:
        """NaN compares false with everything, so it is refused by name rather than let
        through as "not negative"; an infinite limit is no limit, which none of these means."""
        if value is None:
            return
        shown = self.wording.given(name, value)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ArgumentTypeError(f"{shown}: must be a number")
        if not math.isfinite(value):
            raise UsageError(f"{shown}: must be a finite number")
        if value < 0 or (value == 0 and not allow_zero):
            raise UsageError(f"{shown}: must be {'>= 0' if allow_zero else 'positive'}")

    @classmethod
    def given(cls, wording: Wording = PYTHON, *, rungs: Any = None, shapes: Any = None,
              only: Mapping[str, Any] | None = None, backend: Any = None,
              journal: str | os.PathLike | None = None,
              database: str | os.PathLike | None = None, cluster: Any = None,
              **settings: Any) -> TuneSettings:
        """Settings from what a caller wrote: `rungs`, `shapes` and `only` in any of the forms
        `clgemm.tune()` takes (the command's texts among them), `backend` as a name or a
        backend object, files as texts or paths, `cluster` True for a local cluster; the
        other fields as they are."""
        if cluster is True:
            cluster = LOCAL
        elif cluster is False:
            cluster = None
        return cls(rungs=rung_numbers(rungs, wording), shapes=problems(shapes, wording),
                   cluster=cluster.strip() if isinstance(cluster, str) else cluster,
                   only=only_values(only, wording), backend=registry.split_backend(backend)[1],
                   journal=Path(journal) if journal else None,
                   database=Path(database) if database else None, wording=wording, **settings)

    @property
    def bounded(self) -> bool:
        """No evaluation budget, time or exhaustive search asked for: the plan bounds the run."""
        return self.budget is None and self.seconds is None and not self.exhaustive

    def options(self) -> TuneOptions:
        """The search's options, as every rung's search takes them."""
        return TuneOptions(strategy="exhaustive" if self.exhaustive else self.strategy,
                           budget=self.budget, time_s=self.seconds, seed=self.seed,
                           heuristics=self.heuristics, confirm=self.confirm)

    def only_among(self, numbers: Iterable[int]) -> dict[str, tuple[int, ...]]:
        """`only` for a run of these rungs: a parameter none of them has is a mistake (it would
        narrow nothing), refused before anything is measured."""
        known = {name for n in numbers for name in get_rung(n).param_names()}
        for name in self.only:
            check_known(only_shown(self.wording, name, self.only[name]), name, known)
        return dict(self.only)


def only_shown(wording: Wording, name: str, values: Any) -> str:
    """One entry of `only` as the caller wrote it: "--only VWM=1,4" or "only['VWM']"."""
    if wording.options:
        shown = ",".join(map(str, values)) if isinstance(values, tuple) else values
        return f"{wording.name('only')} {name}={shown}"
    return f"only[{name!r}]"


def check_known(where: str, name: str, known: set[str]) -> None:
    """Refuse a parameter none of the chosen rungs has: searching it would search nothing."""
    if name not in known:
        raise UsageError(f"{where}: none of the chosen rungs has a parameter {name} "
                         f"(they have {', '.join(sorted(known)) or 'none'})")


def rung_numbers(rungs: Any, wording: Wording = PYTHON) -> tuple[int, ...] | None:
    """None, a number, a spec such as '1-5' or 'tiled', or a sequence of those."""
    if rungs is None:
        return None
    items = [rungs] if isinstance(rungs, (int, str)) else rungs
    try:
        items = list(items)
    except TypeError:
        raise ArgumentTypeError(f"{wording.given('rungs', rungs)}: give a rung number, a name "
                                f"such as 'tiled', a spec such as '1-5', or a list of those"
                                ) from None
    numbers: set[int] = set()
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise ArgumentTypeError(f"{wording.name('rungs')}: {item!r} is neither a rung "
                                    f"number nor a name")
        numbers.update(parse_rungs(item) if isinstance(item, str) else [get_rung(item).number])
    if not numbers:
        raise UsageError(f"{wording.name('rungs')}: the list is empty")
    return tuple(sorted(numbers))


def _is_size(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def problems(shapes: Any, wording: Wording = PYTHON) -> tuple[Problem, ...] | None:
    """None, a size S, an (M, N, K) triple, a text such as '1024,4096x4096x128,1000x64x64x64',
    or a sequence of sizes, triples and (BATCH, M, N, K) stacks; each shape once, in the order
    given."""
    name = wording.name("shapes")
    if shapes is None:
        return None
    if isinstance(shapes, str):
        return tuple(parse_sizes(shapes, name, stacks=True))
    if _is_size(shapes):
        return (Problem(shapes, shapes, shapes),)
    try:
        items = list(shapes)
    except TypeError:
        raise ArgumentTypeError(f"{wording.given('shapes', shapes)}: give a size, an (M, N, K) "
                                f"triple, or a list of those") from None
    if len(items) == 3 and all(map(_is_size, items)):
        return (Problem(*items),)
    out: list[Problem] = []
    for item in items:
        if _is_size(item):
            p = Problem(item, item, item)
        elif isinstance(item, (tuple, list)) and len(item) == 3:
            p = Problem(*item)
        elif isinstance(item, (tuple, list)) and len(item) == 4:
            p = Problem(item[1], item[2], item[3], batch=item[0])
        else:
            raise ArgumentTypeError(f"{name}: {item!r} is neither a size, an (M, N, K) "
                                    f"triple nor a (BATCH, M, N, K) stack")
        if p not in out:
            out.append(p)
    if not out:
        raise UsageError(f"{name}: the list is empty")
    return tuple(out)


def only_values(only: Mapping[str, Any] | None,
                wording: Wording = PYTHON) -> dict[str, tuple[int, ...]]:
    """{'VWM': [1, 4]} or {'VWM': 4} -> {'VWM': (1, 4)}, {'VWM': (4,)}: each parameter's
    values as a tuple (whether they are non-negative integers the settings check)."""
    if only is not None and not isinstance(only, Mapping):
        raise ArgumentTypeError(f"{wording.given('only', only)}: give a mapping of parameter "
                                f"names to values")
    out: dict[str, tuple[int, ...]] = {}
    for name, values in (only or {}).items():
        try:
            if isinstance(values, (str, bytes)):
                raise TypeError
            out[name] = (values,) if isinstance(values, int) else tuple(values)
        except TypeError:
            raise UsageError(f"{only_shown(wording, name, values)}: give non-negative "
                             f"integers") from None
    return out


def only_from_specs(specs: Iterable[str]) -> dict[str, tuple[int, ...]]:
    """The command's '--only VWM=1,4' (repeatable) -> {'VWM': (1, 4)}."""
    only: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = name.strip()
        try:
            parsed = tuple(int(v) for v in values.split(",")) if sep else ()
        except ValueError:
            parsed = ()
        if not name or not parsed:  # a negative value is the settings' to refuse
            raise UsageError(f"--only {spec}: write NAME=V1,V2,... with non-negative integers")
        only[name] = parsed
    return only


__all__ = ["LOCAL", "TuneSettings", "check_known", "only_from_specs", "only_shown", "only_values",
           "problems", "rung_numbers"]
