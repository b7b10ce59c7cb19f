"""What the library remembers between calls, behind one object: kernel choices, the programs of
call signatures, the calls whose checks have passed, and the configurations tried and failed here.

Everything remembered follows from the tuning the lookup answered with, so all of it is dropped
together when the lookup's generation changes (a tune stored results, `clear_caches`): nothing
here reads the environment or the disk on a call.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Callable, Hashable, Mapping

from clgemm.configs import choice, lookup
from clgemm.configs.choice import Crossover
from clgemm.configs.configuration import Config
from clgemm.devices.info import DeviceInfo
from clgemm.library.same_call import SameCall

#: entries per table before it is emptied: signatures are few in real programs, but a sweep of
#: sizes must not grow the tables without end
LIMIT = 4096


def _key(device: DeviceInfo, number: int, params: Mapping[str, int]) -> tuple:
    """A configuration on a device, as `failed` and `verdicts` hold it."""
    return (device.key, number, tuple(sorted(params.items())))


class CallCache:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.generation = lookup.generation()
        self.choices: dict[tuple, Config] = {}
        self.crossovers: dict[str, Crossover] = {}
        self.programs: dict[Hashable, Any] = {}
        self.calls: dict[Hashable, Any] = {}
        #: calls on device arrays whose program is known, by the same key as `calls`
        self.hot: dict[Hashable, Any] = {}
        #: the last of them repeated on the very same small arrays, found without its key
        self.same = SameCall()
        #: (device key, kernel number, parameters) that failed to build or launch here
        self.failed: set[tuple] = set()
        #: the verdicts of the trials run here (`tried`), by the keys of `failed` and a form
        self.verdicts: dict[tuple, Exception | None] = {}

    def clear(self) -> None:
        with self.lock:
            self.choices.clear()
            self.crossovers.clear()
            self.programs.clear()
            self.calls.clear()
            self.hot.clear()
            self.same.forget()
            self.failed.clear()
            self.verdicts.clear()
            self.generation = lookup.generation()

    def current(self) -> None:
        """Drop what was remembered if the lookup may answer differently now."""
        if self.generation != lookup.generation():
            self.clear()

    def choose(self, device: DeviceInfo, shape: tuple[int, int, int]) -> Config:
        """The kernel gemm() runs on the device at the shape (`configs.choice`)."""
        key = (device.key, shape)
        found = self.choices.get(key)
        if found is None:
            with self.lock:
                cross = self.crossover(device)

                def rejected(number: int, params: Mapping[str, int]) -> bool:
                    return self.rejected(device, number, params)

                found = choice.choose_kernel(device, shape, rejected, cross)
                self._put(self.choices, key, found)
        return found

    def crossover(self, device: DeviceInfo) -> Crossover:
        """The device's direct/indirect crossover (`configs.choice.crossover`)."""
        cross = self.crossovers.get(device.key)
        if cross is None:
            with self.lock:
                cross = self.crossovers[device.key] = choice.crossover(device)
        return cross

    def remembered(self, table: dict, key: Hashable, make: Callable[[], Any]) -> Any:
        value = table.get(key)
        if value is None:
            value = make()
            with self.lock:
                self._put(table, key, value)
        return value

    @staticmethod
    def _put(table: dict, key: Hashable, value: Any) -> None:
        if len(table) >= LIMIT:
            table.clear()
        table[key] = value

    def rejected(self, device: DeviceInfo, number: int, params: Mapping[str, int]) -> bool:
        """Whether a configuration failed here (`reject`)."""
        return _key(device, number, params) in self.failed

    def tried(self, device: DeviceInfo, choice: Config, trial: Callable[[], Exception | None],
              form: Hashable = ()) -> Exception | None:
        """The verdict of the configuration's trial on the device (`library.trial`) in one
        `form` (what else its build depends on: transposes, a batched launch): None if it
        passed, else why not. The first program of a configuration in a form runs `trial`,
        with the lock held, so that another thread's first program waits for that verdict."""
        key = (*_key(device, choice.rung, choice.params), form)
        with self.lock:
            if key not in self.verdicts:
                self.verdicts[key] = trial()
            return self.verdicts[key]

    def reject(self, device: DeviceInfo, choice: Config, exc: Exception) -> None:
        """A stored configuration that failed here: never chosen again in this process, and
        every choice, program and call that used it forgotten."""
        warnings.warn(f"clgemm: {choice.describe()} failed on {device.name} ({exc}); using the "
                      f"next choice instead", RuntimeWarning, stacklevel=5)
        with self.lock:
            self.failed.add(_key(device, choice.rung, choice.params))
            self.choices.clear()
            self.programs.clear()
            self.calls.clear()
            self.hot.clear()
            self.same.forget()


#: everything the library remembers between calls
CACHE = CallCache()
