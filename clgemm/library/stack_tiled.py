"""A stack of products on the tiled kernel's batched form, where one product's sizes suit it.

The direct kernel runs any stack, but its tiles are small and it stages every operand in the
layout it is given; products of a few hundred rows and more run several times faster on the
tiled kernel. Its batched form (BATCHED in tiled.cl) runs every product of the stack in one
launch, each operand a stride further on per product. It reads A tight, column-major and at
offset 0, and writes C whole: so this path is taken where alpha is 1 and beta 0, A and C are
tight, and the tiles of the chosen configuration divide the sizes. That configuration is the
nearest in shape and count of those measured on stacks for the device, where there is one:
the tuner measures a stack reading each product's B where it lies, and B tight is read so
here too, so that a C-ordered stack is one launch. Else it is the one stored for one product,
where it reads through local memory and the stack is past the device's crossover, and it reads
BT: the stack's own B where it is stored transposed, or made from it by one batched pack that
transposes every product. Anything else stays on the direct kernel (`stack_launch.launch_stack`).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from clgemm.backends import Backend, Mat
from clgemm.configs import lookup
from clgemm.configs.configuration import Config
from clgemm.configs.launch import helper_kernel, tiles_geometry
from clgemm.core.errors import BuildError, UsageError
from clgemm.core.memory_fit import check_memory
from clgemm.library.cache import CACHE
from clgemm.library.order import LaunchOrder
from clgemm.library.plan import Plan
from clgemm.library.program import A, B, C, CallProgram, Slot
from clgemm.library.stack_trial import COUNT, stack_verdict
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import TILED, reads_b_itself, tiled_macros


def tiled_stack(be: Backend, m: int, n: int, k: int, alpha: np.float32, beta: np.float32,
                a: Mat, b: Mat, c: Mat, strides: tuple[int, int, int],
                count: int) -> CallProgram | None:
    """The launches of a stack of `count` products M x N x K on the tiled kernel (the
    matrices as the kernels see them, `strides` floats apart), built; None where the stack does
    not suit it."""
    config, on_stack = stack_params(be, m, n, k, count)
    params = config.params if config is not None else {}
    width = params.get("WIDTH", 1)
    most = be.max_groups[2] if be.max_groups is not None else count
    stride_a, stride_b, stride_c = strides
    if (config is None or alpha != 1 or beta != 0 or count > most
            or a.trans or a.ld != m or a.offset or stride_a % width
            or c.ld != m or c.offset):
        return None
    prog = CallProgram(Plan(m, n, k, alpha, beta, choice=config))
    bt: Slot = B
    in_place = (on_stack and not b.trans and b.ld == k and not b.offset
                and stride_b % width == 0)
    if in_place:
        pass  # each product's B read as it lies (STACK_MACROS)
    elif b.trans and b.ld == n and not b.offset and stride_b % width == 0:
        pass  # the stack's B is already BT, tight: read where it lies
    elif not b.trans and _reads_bt_stacked(params):
        try:
            check_memory(be.device, [("the stack's BT", count * n * k)])
        except UsageError:
            return None  # the direct kernel needs no copy: it runs instead
        bt = _pack_transposed(be, prog, b, n, k, stride_b, count)
        stride_b = n * k
    else:
        return None
    try:
        knl = be.program(TILED.file, tiled_macros(params, batched=True, stacked_b=in_place),
                         TILED.kernel)
    except BuildError as exc:  # a stored configuration this device cannot build
        CACHE.reject(be.device, config, exc)
        return None  # the direct kernel runs
    wrong = _trial(be, config, knl, (m, n, k), in_place)
    if wrong is not None:
        CACHE.reject(be.device, config, wrong)
        return None
    (gx, gy), (lx, ly) = TILED.geometry(params, m, n)
    prog.add("tiled kernel, stacked" + (", B as it lies" if in_place else ""), knl,
             (gx, gy, count), (lx, ly, 1),
             [*TILED.args(m, n, k, A, bt, C), stride_a, stride_b, stride_c])
    return prog


def _trial(be: Backend, config: Config, knl: Any, sizes: tuple[int, int, int],
           in_place: bool) -> Exception | None:
    """The verdict of the configuration's batched build (`stack_trial`): A tight, B as it lies
    or BT tight, as the stack reads them; alpha 1 and beta 0, the only scalars this path
    takes."""
    params = config.params

    def launch(order: LaunchOrder, a: Mat, b: Mat, c: Mat, shape: tuple[int, int, int],
               strides: tuple[int, int, int]) -> None:
        (gx, gy), (lx, ly) = TILED.geometry(params, shape[0], shape[1])
        with be.lock:
            order.enqueue(knl, (gx, gy, COUNT), (lx, ly, 1),
                          [*TILED.args(*shape, a.buf, b.buf, c.buf), *strides])

    return stack_verdict(be, config, "B as it lies" if in_place else "BT", sizes,
                         (False, not in_place), (1.0, 0.0), launch,
                         TILED.size_multiples(params))


def _reads_bt_stacked(params: Mapping[str, int]) -> bool:
    """Whether a configuration runs a stack from BT: through local memory, without panels."""
    return not params["PANELS"] and bool(params["CACHE_A"]) and bool(params["CACHE_B"])


def stack_params(be: Backend, m: int, n: int, k: int, count: int
                 ) -> tuple[Config | None, bool]:
    """The tiled kernel's configuration for one product of the stack, where the stack is to
    run on it, and whether it was measured on a stack. A configuration measured on a stack of
    this shape runs it unless the direct kernel measured on one is expected faster. Else one
    product's stored configuration runs it where it reads BT through local memory, its tiles
    divide the sizes and the whole stack's multiply-adds reach the device's crossover (the
    same measure that sends a single product to the packing kernels). None: the direct
    kernel, as where the configuration failed here (`CACHE.reject`)."""
    def usable(found: lookup.Found) -> Config | None:
        params = TILED.resolve(dict(found.params))
        if CACHE.rejected(be.device, TILED.number, params):
            return None
        return Config(TILED.number, params, found.label)

    def find() -> tuple[Config | None, bool]:
        shape = (m, n, k)
        stacked = lookup.best(be.device, TILED, shape, batch=count)
        if stacked is not None and stacked.batch > 1 and reads_b_itself(stacked.params):
            direct = lookup.best(be.device, DIRECT, shape, batch=count)
            if (direct is None or direct.batch <= 1
                    or lookup.expected_gflops(be.device, TILED, stacked, shape, count)
                    >= lookup.expected_gflops(be.device, DIRECT, direct, shape, count)):
                return usable(stacked), True
            return None, False
        if count * m * n * k < CACHE.crossover(be.device).min_indirect:
            return None, False
        found = lookup.best(be.device, TILED, shape)
        config = usable(found) if found is not None else None
        if config is None or not _reads_bt_stacked(config.params):
            return None, False
        tm, tn, tk = TILED.size_multiples(config.params)
        return (None, False) if m % tm or n % tn or k % tk else (config, False)

    chosen: tuple[Config | None, bool] = CACHE.remembered(
        CACHE.programs, ("stack, tiled", be.device.key, m, n, k, count), find)
    return chosen


def _pack_transposed(be: Backend, prog: CallProgram, b: Mat, n: int, k: int, stride: int,
                     count: int) -> Slot:
    """BT of every product (N x K, tight, one after another) from the stored K x N matrices
    of the stack, in one launch."""
    out = prog.new_scratch(count * n * k)
    knl = helper_kernel(be, "pack_transpose", batched=True)
    (gx, gy), (lx, ly) = tiles_geometry(be, "pack_transpose", n, k)
    args: list[Any] = [n, k, n, k, B, b.offset, b.ld, out, stride]
    prog.add("pack of B, stacked", knl, (gx, gy, count), (lx, ly, 1), args)
    return out
