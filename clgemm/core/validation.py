"""Checks of values read back from files (tuning databases, journals) before anything uses them.

JSON can hold anything, and Python is lenient with what it holds: `True` is an int, `int(32.9)`
is 32, `int(" 32 ")` is 32, and a dictionary key can be any text. A parameter set is turned into
`-DNAME=VALUE` compiler options, so a name or a value that is not what it claims to be could
redefine other macros or add options; these checks say exactly what is acceptable.
"""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

#: a C macro name, and nothing else (no spaces, no '=', no option)
MACRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def is_int(value: Any) -> bool:
    """A real integer: not a bool, not a float that happens to be whole, not a string."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_finite(value: Any) -> bool:
    """A real, finite number (int or float, not a bool)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(value))


def is_macro_name(value: Any) -> bool:
    return isinstance(value, str) and MACRO_NAME.match(value) is not None


def params_problem(params: Any) -> str | None:
    """Why `params` is not a set of macro name -> integer, or None if it is one."""
    if not isinstance(params, dict):
        return f"parameters {params!r} are not a mapping of names to integers"
    for name, value in params.items():
        if not is_macro_name(name):
            return f"parameter name {name!r} is not a macro name"
        if not is_int(value):
            return f"parameter {name}={value!r} is not an integer"
    return None
