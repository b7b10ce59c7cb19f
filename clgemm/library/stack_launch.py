"""Which kernel runs a stack of products, and its launches: the tiled kernel's batched form
where the products suit it (`stack_tiled`), else the direct kernel's, as many products a launch
as the API allows. A stored configuration that fails a stack here (its build, its launch or its
trial: `stack_trial`) is dropped for the process, and the stack runs on the next choice.
"""

from __future__ import annotations

import functools
from typing import Mapping

import numpy as np

from clgemm.backends import Backend, Mat
from clgemm.configs.choice import direct_config
from clgemm.configs.configuration import Config
from clgemm.core.errors import BuildError, ClgemmError, LaunchError, UsageError
from clgemm.core.memory_fit import INT_MAX
from clgemm.library.cache import CACHE
from clgemm.library.order import LaunchOrder
from clgemm.library.plan import Plan
from clgemm.library.program import A, B, C, CallProgram
from clgemm.library.signatures import FALLBACK_TRIES
from clgemm.library.stack_tiled import tiled_stack
from clgemm.library.stack_trial import COUNT, stack_verdict
from clgemm.rungs.direct import DIRECT, batched_geometry, direct_macros

#: the positions of A's, B's and C's buffers among the batched direct kernel's arguments
BUFFER_ARGS = (5, 8, 11)


def launch_stack(be: Backend, order: LaunchOrder, params: Mapping[str, int], m: int, n: int,
                 k: int, alpha: np.float32, beta: np.float32, a: Mat, b: Mat, c: Mat,
                 strides: tuple[int, int, int], count: int) -> CallProgram | None:
    """Queue the products on the direct kernel, as many per launch as the API allows along the
    third dimension. Returns the launch where there was one, as a program naming A, B and C by
    slot, for a repeated call to bind its own buffers."""
    knl = be.program(DIRECT.file, direct_macros(params, a.trans, b.trans, batched=True),
                     DIRECT.kernel)
    most = be.max_groups[2] if be.max_groups is not None else count
    for first in range(0, count, most):
        part = min(most, count - first)
        gsize, lsize = batched_geometry(params, m, n, part)
        offsets = [x.offset + first * s for x, s in zip((a, b, c), strides)]
        if max(offsets) > INT_MAX:
            raise UsageError(f"the stack reaches past float {INT_MAX}, the largest offset the "
                             f"kernel takes")
        args = [m, n, k, alpha, beta, a.buf, offsets[0], a.ld, b.buf, offsets[1], b.ld, c.buf,
                offsets[2], c.ld, *strides]
        try:
            with be.lock:
                order.enqueue(knl, gsize, lsize, args)
        except LaunchError as exc:
            if not first:
                raise
            # not a LaunchError: the products queued before are written, so no other
            # configuration may run the stack again
            raise ClgemmError(f"a stack's launch failed after {first} of its {count} products "
                              f"were queued: {exc}") from exc
    if count > most:
        return None
    for i, slot in zip(BUFFER_ARGS, (A, B, C)):
        args[i] = slot
    program = CallProgram(Plan(m, n, k, alpha, beta))
    program.add("stack", knl, gsize, lsize, args)
    return program


def stack_kernel(be: Backend, m: int, n: int, k: int, count: int = 1) -> Config:
    """The direct kernel's configuration for a stack of `count` products of m x n x k: the
    one measured on a stack where the lookup holds one, else one product's (stored, else
    defaults), none that failed here; looked up once per device, shape and count."""
    def find() -> Config:
        found = direct_config(be.device, (max(1, m), max(1, n), max(1, k)),
                              functools.partial(CACHE.rejected, be.device),
                              batch=max(1, count))
        if found is None:
            raise UsageError(f"the direct kernel does not fit device '{be.device.name}', and "
                             f"stacks of products run on it")
        return found[0]

    config: Config = CACHE.remembered(CACHE.programs, ("stack", be.device.key, m, n, k, count),
                                      find)
    return config


def run_stack(be: Backend, order: LaunchOrder, sizes: tuple[int, int, int],
              scalars: tuple[np.float32, np.float32], mats: tuple[Mat, Mat, Mat],
              strides: tuple[int, int, int], count: int) -> CallProgram | None:
    """Queue a stack's products (as the kernels see them) on the tiled kernel where it suits
    them (`stack_tiled`), else on the direct kernel (`launch_stack`); returns what ran, as
    `launch_stack` does. A stored configuration that fails to build, to launch or its trial
    (`stack_trial`) is dropped for the process and the stack runs on the next choice: the
    direct kernel after the tiled one, the next stored direct configuration, then the direct
    kernel's defaults. A failing launch is the first that writes C, so C is as it was."""
    (m, n, k), (alpha, beta), (a, b, c) = sizes, scalars, mats
    for attempt in range(FALLBACK_TRIES + 1):
        tiled = tiled_stack(be, m, n, k, alpha, beta, a, b, c, strides, count)
        config = tiled.plan.chosen if tiled is not None else stack_kernel(be, m, n, k, count)
        failed: Exception | None
        try:
            if tiled is not None:
                with be.lock:
                    tiled.run(order, a.buf, b.buf, c.buf)
                return tiled
            failed = _direct_trial(be, config, sizes, scalars, (a.trans, b.trans))
            if failed is None:
                return launch_stack(be, order, config.params, m, n, k, alpha, beta, a, b, c,
                                    strides, count)
        except (BuildError, LaunchError) as exc:
            failed = exc
        if config.source in ("user", "default") or attempt == FALLBACK_TRIES:
            raise failed
        CACHE.reject(be.device, config, failed)
    raise AssertionError("unreachable")


def _direct_trial(be: Backend, config: Config, sizes: tuple[int, int, int],
                  scalars: tuple[np.float32, np.float32],
                  trans: tuple[bool, bool]) -> Exception | None:
    """The verdict of the direct kernel's batched build with these transposes
    (`stack_trial`)."""
    alpha, beta = scalars

    def launch(order: LaunchOrder, a: Mat, b: Mat, c: Mat, shape: tuple[int, int, int],
               strides: tuple[int, int, int]) -> None:
        launch_stack(be, order, config.params, *shape, alpha, beta, a, b, c, strides, COUNT)

    return stack_verdict(be, config, "direct", sizes, trans, (float(alpha), float(beta)),
                         launch)
