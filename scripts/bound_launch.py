"""The one launch of a repeated gemm() call, with its buffer arguments bound to given arrays:
what the scripts that time a launch by other ways than gemm()'s queue (launch_floor.py,
kernel_timing_check.py). Imported by them; it runs nothing itself."""

from typing import Any

from clgemm.library import gemm as api


def bound_launch(a: Any, b: Any, c: Any) -> tuple[Any, Any, list]:
    """(the hot call, its one launch, the launch's arguments with A, B and C bound) of the last
    call remembered; None for the hot call where its program is more than one launch."""
    hot = next(iter(api.CACHE.hot.values()))
    if len(hot.program.launches) != 1 or hot.program.scratch:
        return None, None, []
    launch, slots = hot.program.launches[0], hot.program.slots[0]
    x, y = (b, a) if hot.swap else (a, b)
    bound = {"a": hot.kind.kernel_arg(x), "b": hot.kind.kernel_arg(y),
             "c": hot.kind.kernel_arg(c)}
    args = list(launch.args)
    for i, slot in slots:
        args[i] = bound[slot.name]
    return hot, launch, args
