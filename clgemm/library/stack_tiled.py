"""A stack of products on the tiled kernel's batched form, where one product's sizes suit it.

The direct kernel runs any stack, but its tiles are small and it stages every operand in the
layout it is given; products of a few hundred rows and more run several times faster on the
tiled kernel. Its batched form (BATCHED in tiled.cl) runs every product of the stack in one
launch, each operand a stride further on per product. It reads A and BT tight, column-major and
at offset 0, and writes C whole: so this path is taken where the device's stored tiled
configuration for one product reads through local memory and its tiles divide the sizes, the
whole stack is past the device's crossover, alpha is 1 and beta 0, A and C are tight, and BT is
either the stack's own B (stored transposed) or made from it by one batched pack that
transposes every product. Anything else stays on the direct kernel (`stacks.launch_stack`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clgemm.backends import Backend, Mat
from clgemm.configs import lookup
from clgemm.core.errors import BuildError, UsageError
from clgemm.core.memory_fit import check_memory
from clgemm.library.cache import CACHE
from clgemm.library.plan import Plan
from clgemm.library.program import (A, B, C, HELPERS_FILE, CallProgram, Slot, pack_tile,
                                    tiles_geometry)
from clgemm.rungs.tiled import TILED, tiled_macros


def tiled_stack(be: Backend, m: int, n: int, k: int, alpha: np.float32, beta: np.float32,
                a: Mat, b: Mat, c: Mat, strides: tuple[int, int, int],
                count: int) -> CallProgram | None:
    """The launches of a stack of `count` products M x N x K on the tiled kernel (the
    matrices as the kernels see them, `strides` floats apart), built; None where the stack does
    not suit it."""
    params = stack_params(be, m, n, k, count)
    width = params.get("WIDTH", 1)
    most = be.max_groups[2] if be.max_groups is not None else count
    stride_a, stride_b, stride_c = strides
    if (not params or alpha != 1 or beta != 0 or count > most
            or a.trans or a.ld != m or a.offset or stride_a % width
            or c.ld != m or c.offset):
        return None
    prog = CallProgram(Plan(m, n, k, alpha, beta))
    bt: Slot = B
    if b.trans and b.ld == n and not b.offset and stride_b % width == 0:
        pass  # the stack's B is already BT, tight: read where it lies
    elif not b.trans:
        try:
            check_memory(be.device, [("the stack's BT", count * n * k)])
        except UsageError:
            return None  # the direct kernel needs no copy: it runs instead
        bt = _pack_transposed(be, prog, b, n, k, stride_b, count)
        stride_b = n * k
    else:
        return None
    try:
        knl = be.program(TILED.file, tiled_macros(params, batched=True), TILED.kernel)
    except BuildError:
        return None  # a stored configuration this device cannot build: the direct kernel runs
    (gx, gy), (lx, ly) = TILED.geometry(params, m, n)
    prog.add("tiled kernel, stacked", knl, (gx, gy, count), (lx, ly, 1),
             [*TILED.args(m, n, k, A, bt, C), stride_a, stride_b, stride_c])
    return prog


def stack_params(be: Backend, m: int, n: int, k: int, count: int) -> dict[str, int]:
    """The tiled kernel's parameters for one product of the stack, where the stack is to run on
    it: stored for the device at that shape, through local memory, its tiles dividing the
    sizes, and the whole stack's multiply-adds at least the device's crossover (the same
    measure that sends a single product to the packing kernels); else an empty dict."""
    if count * m * n * k < CACHE.crossover(be.device).min_indirect:
        return {}

    def find() -> dict[str, int]:
        found = lookup.best(be.device, TILED, (m, n, k))
        if found is None:
            return {}
        params = TILED.resolve(dict(found.params))
        if params["PANELS"] or not params["CACHE_A"] or not params["CACHE_B"]:
            return {}
        tm, tn, tk = TILED.size_multiples(params)
        return {} if m % tm or n % tn or k % tk else params

    params: dict[str, int] = CACHE.remembered(CACHE.programs,
                                              ("stack, tiled", be.device.key, m, n, k), find)
    return params


def _pack_transposed(be: Backend, prog: CallProgram, b: Mat, n: int, k: int, stride: int,
                     count: int) -> Slot:
    """BT of every product (N x K, tight, one after another) from the stored K x N matrices
    of the stack, in one launch."""
    out = prog.new_scratch(count * n * k)
    knl = be.program(HELPERS_FILE, {"PACK_TILE": pack_tile(be), "BATCHED": 1}, "pack_transpose")
    (gx, gy), (lx, ly) = tiles_geometry(be, n, k)
    args: list[Any] = [n, k, n, k, B, b.offset, b.ld, out, stride]
    prog.add("pack of B, stacked", knl, (gx, gy, count), (lx, ly, 1), args)
    return out
