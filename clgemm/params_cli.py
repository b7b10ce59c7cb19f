"""Parsing of the `--param [RUNG:]NAME=VALUE` options shared by the commands."""

from __future__ import annotations

from .errors import UsageError
from .rungs import get_rung


def parse_param_options(options: tuple[str, ...] | list[str], rungs: list[int]) -> dict[int, dict[str, int]]:
    """Per-rung overrides. Without a 'RUNG:' prefix a setting applies to every selected rung
    that has that macro; a setting no selected rung can take is an error."""
    out: dict[int, dict[str, int]] = {}
    for opt in options:
        text = opt.strip()
        target, _, assign = text.rpartition(":")
        name, eq, value = assign.partition("=")
        name = name.strip().upper()
        if not eq or not name:
            raise UsageError(f"--param '{opt}': write NAME=VALUE or RUNG:NAME=VALUE")
        try:
            number = int(value)
        except ValueError:
            raise UsageError(f"--param '{opt}': value '{value}' is not an integer") from None
        if target:
            try:
                wanted = [int(target)]
            except ValueError:
                raise UsageError(f"--param '{opt}': rung '{target}' is not a number") from None
            if wanted[0] not in rungs:
                raise UsageError(f"--param '{opt}': rung {wanted[0]} is not among the selected rungs")
            if name not in get_rung(wanted[0]).param_names():
                raise UsageError(f"--param '{opt}': rung {wanted[0]} has no parameter {name} "
                                 f"(it has {', '.join(get_rung(wanted[0]).param_names())})")
        else:
            wanted = [r for r in rungs if name in get_rung(r).param_names()]
            if not wanted:
                raise UsageError(f"--param '{opt}': no selected rung has a parameter {name}")
        for r in wanted:
            out.setdefault(r, {})[name] = number
    return out
