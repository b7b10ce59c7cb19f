"""One configuration: a kernel (a rung or a library kernel), its full parameter set, and where
the parameters came from; and the one way every tool arrives at it.

Parameters come from three places, in this order of precedence: the user (`--param`, gemm's
`kernel=`), the lookup chain's stored configuration for the shape (`lookup.best`: this device,
another driver, the family, the device type), and the kernel's own defaults. The ladder, the
bench, the model, verify and gemm() all ask `configure` (or `verify_candidates`), so a
configuration is resolved, named and checked the same way wherever it runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from clgemm.configs import lookup, trial_record
from clgemm.core.errors import UsageError
from clgemm.core.tables import params_text
from clgemm.rungs import LIBRARY, Rung, get_rung


#: what a configuration is, whatever its source: the kernel and its sorted parameters
ConfigKey = trial_record.Key


@dataclass(frozen=True)
class Config:
    """A kernel number, its full parameter set, and their source: the lookup chain's label
    ("tuned", "family: NVIDIA H200", "default: CPU", ...), "default" (the kernel's own) or
    "user"."""

    rung: int
    params: Mapping[str, int] = field(hash=False)
    source: str = "default"

    @property
    def record(self) -> Rung:
        return get_rung(self.rung)

    def text(self) -> str:
        return params_text(self.params)

    @property
    def key(self) -> ConfigKey:
        return trial_record.key_of(self.rung, self.params)

    @property
    def borrowed(self) -> bool:
        """Measured on another driver or device (`lookup.borrowed`): never run here yet."""
        return lookup.borrowed(self.source)

    def describe(self) -> str:
        record = self.record
        name = f"{record.slug} kernel" if self.rung in LIBRARY else f"rung {self.rung}"
        text = self.text()
        return f"{name} ({self.source}{': ' + text if text else ''})"

    def problem(self, limits: Any, m: int, n: int, k: int) -> str | None:
        """Why this configuration cannot run an M x N x K product on a device with these
        limits, or None."""
        record = self.record
        bad = record.first_violation(self.params, limits)
        return bad.name if bad is not None else record.size_problem(self.params, m, n, k)

    def require(self, limits: Any, m: int, n: int, k: int) -> None:
        """Refuse by name (ConstraintError, UsageError) a configuration that cannot run here,
        before anything is built."""
        record = self.record
        record.validate(self.params, limits)
        why = record.size_problem(self.params, m, n, k)
        if why:
            raise UsageError(f"rung {self.rung} with {self.text()} cannot do M={m} N={n} K={k}: "
                             f"{why}")


#: a trial of configurations in a child process before this one runs them: why each that failed
#: there did, by its key (`tuner.first_launch`, which the commands pass down to the layers that
#: run kernels)
Trial = Callable[[list[Config]], Mapping[ConfigKey, str]]


def from_found(found: lookup.Found) -> Config:
    return Config(found.rung, dict(found.params), found.label)


def configure(device: Any, number: int, shape: Sequence[int],
              user: Mapping[str, int] | None = None, stored: bool = True) -> Config:
    """The configuration a tool runs for a kernel at a shape: the user's values over the lookup
    chain's (unless `stored` is off) over the defaults. Divisibility is checked here; a set the
    user named must also fit the device and the shape, since running something else would not
    be what was asked."""
    rung = get_rung(number)
    found = lookup.best(device, rung, shape) if stored else None
    params = rung.resolve({**(found.params if found else {}), **(user or {})})
    source = "user" if user else (found.label if found else "default")
    config = Config(number, params, source)
    rung.validate(params)
    if user:
        config.require(device.limits(), *shape)
    return config


def configure_all(device: Any, numbers: Sequence[int], shape: Sequence[int],
                  user: Mapping[int, Mapping[str, int]] | None = None,
                  stored: bool = True) -> dict[int, Config]:
    """`configure` for several kernels, by number."""
    return {n: configure(device, n, shape, (user or {}).get(n), stored) for n in numbers}


def user_config(device: Any, number: int, params: Mapping[str, int] | None) -> Config:
    """A configuration the caller forced: completed with defaults and checked against the
    device (gemm's `kernel=` argument)."""
    rung = get_rung(number)
    resolved = rung.resolve(params)
    rung.validate(resolved, device.limits())
    return Config(number, resolved, "user")


def verify_candidates(device: Any, number: int,
                      shapes: Sequence[Sequence[int]]) -> list[Config]:
    """The kernel's defaults and its forms (`Rung.forms`), then every distinct configuration the
    lookup chain would run at these shapes, from whatever level (verify sweeps them all). Size
    fit is not required: the sweep picks sizes per configuration."""
    rung = get_rung(number)
    out = [Config(number, rung.defaults(), "default")]
    out += [Config(number, rung.resolve(dict(form)), f"form: {name}")
            for name, form in rung.forms.items()]
    for shape in shapes:
        found = lookup.best(device, rung, shape, fit=False)
        if found is not None and all(c.params != found.params for c in out):
            out.append(from_found(found))
    return out
