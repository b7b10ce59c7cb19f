"""A borrowed configuration's first launch, tried in a child process before this one runs it.

The lookup chain hands a device what another driver, its family or another device of its type
measured (`lookup.borrowed`). This compiler and runtime have never run such a configuration: a
wrong result is caught by the check after the launch, but a runtime that crashes on it takes the
caller's process along, and a student's ladder or an implementer's verify ends in a segmentation
fault with nothing printed (results/xeon/rung10-pocl5). The ladder, verify and the bench try
each borrowed configuration once in the tuner's measuring process, which a crash cannot take
down. The trial runs the smallest product the configuration can do: a runtime that generates
its code per work-group size at the first launch (PoCL) generates it there, for the same
work-group as the real launch. A failure is recorded (`configs.trial_record`), so that the
lookup never hands that configuration to the device again, `gemm()` included.
"""

from __future__ import annotations

from typing import Callable, Iterable

from clgemm.configs import trial_record
from clgemm.configs.configuration import Config, ConfigKey
from clgemm.devices.info import DeviceInfo
from clgemm.tuner.evaluate import Evaluator
from clgemm.tuner.worker import resolve_rung, warm_problem

#: seconds a trial launch may take: the product is one work-group's
LAUNCH_LIMIT_S = 30.0


def _number(config: Config) -> int | str:
    return config.rung


def trial_failures(device: DeviceInfo, configs: Iterable[Config],
                   progress: Callable[[str], None] | None = None,
                   ref_of: Callable[[Config], int | str] = _number) -> dict[ConfigKey, str]:
    """Why each borrowed configuration among `configs` cannot run here (a crash, a failed
    build, a wrong result), by `Config.key`; those that ran right, and those not borrowed, are
    left out. One child process serves them all and is replaced after a crash. `ref_of` names
    the kernel as the child finds it (`worker.resolve_rung`): its number, or a test's made-up
    kernel."""
    todo = {config.key: config for config in configs if config.borrowed}
    if not todo:
        return {}
    failures: dict[ConfigKey, str] = {}
    rungs = {key: resolve_rung(ref_of(config)) for key, config in todo.items()}
    first = next(iter(todo))
    start = warm_problem(rungs[first], todo[first].params)
    with Evaluator(device, start, repeats=1, warmup=0, launch_timeout=LAUNCH_LIMIT_S) as ev:
        for key, config in todo.items():
            if progress:
                progress(f"trying {rungs[key].slug} {config.text()} ({config.source}) in a "
                         f"child process")
            ev.retarget(warm_problem(rungs[key], config.params))
            res = ev.evaluate(ref_of(config), dict(config.params))
            if res.get("status") != "ok":
                failures[key] = f"{res.get('status')}: {res.get('message') or 'no message'}"
    trial_record.record(device.key, failures)
    return failures


class Trials:
    """`trial_failures` for one device that remembers what it tried, for a command that meets
    the same configuration at several shapes (the bench): each is tried once per run."""

    def __init__(self, device: DeviceInfo, progress: Callable[[str], None] | None = None):
        self.device = device
        self.progress = progress
        self.outcomes: dict[ConfigKey, str | None] = {}

    def __call__(self, configs: Iterable[Config]) -> dict[ConfigKey, str]:
        configs = list(configs)
        new = [c for c in configs if c.borrowed and c.key not in self.outcomes]
        failed = trial_failures(self.device, new, self.progress)
        self.outcomes.update({c.key: failed.get(c.key) for c in new})
        return {c.key: why for c in configs if c.borrowed
                and (why := self.outcomes.get(c.key)) is not None}
