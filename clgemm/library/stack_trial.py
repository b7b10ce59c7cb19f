"""The trial (`library.trial`) of a kernel's batched form, before a stack of products relies on
a stored configuration.

A stack runs its kernel built with BATCHED (and, on the tiled kernel, with B read as it lies
or as BT): a build of its own, which no two-dimensional call's trial has run. So the first
stack to run a stored configuration in a form first runs that form on a stack of `COUNT` small
products (`trial.trial_sizes` of one product's sizes, the stack's transposes and scalars, each
product's operands drawn apart and tight, one after another), and every product is judged. A
wrong result drops the configuration for the process, as a failed build or launch does.
"""

from __future__ import annotations

from typing import Callable, Hashable

import numpy as np

from clgemm.backends import Backend, Mat
from clgemm.configs.configuration import Config
from clgemm.core.errors import BuildError, ClgemmError, LaunchError
from clgemm.library import trial
from clgemm.library.cache import CACHE
from clgemm.library.order import LaunchOrder

#: products in a stack's trial: two, so that the second is found by the strides
COUNT = 2

#: queues the form on a trial's operands, holding the backend's lock while it enqueues:
#: (order, A, B, C, (M, N, K), the strides in floats)
Launch = Callable[[LaunchOrder, Mat, Mat, Mat, tuple[int, int, int], tuple[int, int, int]],
                  None]


def stack_verdict(be: Backend, config: Config, form: Hashable, sizes: tuple[int, int, int],
                  trans: tuple[bool, bool], scalars: tuple[float, float], launch: Launch,
                  multiples: tuple[int, int, int] = (1, 1, 1)) -> Exception | None:
    """Why the stored `config` is wrong in this batched `form` on the device (None: it
    passed, or it is not a stored one, or trials are off); tried once per process."""
    if config.source in ("user", "default") or not trial.ENABLED:
        return None
    return CACHE.tried(be.device, config, lambda: _try(be, config, sizes, trans, scalars,
                                                      launch, multiples),
                       ("stack", form, *trans))


def _try(be: Backend, config: Config, sizes: tuple[int, int, int], trans: tuple[bool, bool],
         scalars: tuple[float, float], launch: Launch,
         multiples: tuple[int, int, int]) -> ClgemmError | None:
    products = [trial.trial_for(*sizes, *trans, *scalars, multiples=multiples, salt=p)
                for p in range(COUNT)]
    first = products[0]
    m, n = first.m, first.n
    operands = [np.concatenate([t.flat()[i] for t in products]) for i in range(3)]
    try:
        with be.activate(), be.unobserved():
            bufs = [be.to_device(x) for x in operands]
            mats = (Mat(bufs[0], 0, first.lda, trans[0]), Mat(bufs[1], 0, first.ldb, trans[1]),
                    Mat(bufs[2], 0, m, False))
            strides = (operands[0].size // COUNT, operands[1].size // COUNT, m * n)
            launch(LaunchOrder(be, None, []), *mats, (m, n, first.k), strides)
            be.synchronize()
            got = be.to_host(bufs[2], COUNT * m * n)
    except (BuildError, LaunchError) as exc:
        return exc
    for p, product in enumerate(products):
        wrong = product.judge(got[p * m * n:(p + 1) * m * n],
                              f"{config.describe()}, product {p + 1} of a stack")
        if wrong is not None:
            return wrong
    return None
