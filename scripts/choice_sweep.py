"""Whether gemm()'s choice of kernel is the fastest one it could have made, over the classes of
shapes of `bench --call --sizes classes`: each shape is timed end to end (device arrays,
C-ordered, C given, the same call repeated) as gemm() chooses, then with each other stored
option forced: the direct kernel (its own split of K), the tiled kernel's best stored
configuration and its best one that reads B where it lies (each at every split of K into whole
tiles), the skinny kernel's nearest stored entry and the tiled kernel for any size; on CUDA
beside cp.matmul. Every forced call's result is checked against float64. Shapes are the user's
(M x N x K); the kernels see N x M x K. With UNROLL=1 each tiled option is also timed with
UNROLL_K flipped. Usage:
    python scripts/choice_sweep.py DEVICE BACKEND [SHAPE ...]   (SHAPE as MxNxK)"""

import dataclasses
import os
import sys

import numpy as np

import clgemm
from clgemm.configs import choice, lookup
from clgemm.configs.configuration import Config, from_found
from clgemm.library import gemm as api
from clgemm.measure.call_bench import NAMED_SHAPES, Side, checked_error
from clgemm.measure.call_timing import per_call_ms
from clgemm.rungs import get_rung
from clgemm.rungs.skinny import SKINNY
from clgemm.rungs.tiled import TILED, reads_b_itself

SPLITS = (1, 2, 4, 8, 16)
#: UNROLL=1: each tiled option also with its loop over a tile's depth unrolled the other way
FLIP_UNROLL = os.environ.get("UNROLL") == "1"
dev, backend_name = sys.argv[1], sys.argv[2]
shapes = ([tuple(int(x) for x in s.split("x")) for s in sys.argv[3:]]
          or list(NAMED_SHAPES["classes"]))
be = api.backend_for(dev, backend_name)
side = Side(be, "device")
rng = np.random.default_rng(0)
original_choose, original_split = api.CACHE.choose, choice.split_for


def forced(config: Config | None, split: int | None = None) -> None:
    """gemm() made to run `config` (None: its own choice), at `split` slices of K where given."""
    api.CACHE.choose = original_choose if config is None else (lambda device, shape: config)
    choice.split_for = (original_split if split is None
                        else (lambda device, cfg, shape, s=split: s))
    api.clear_caches()


def short(config: Config) -> str:
    keys = ("TSM", "TSN", "TSK", "PIPELINE", "UNROLL_K", "LR", "LK", "VR", "SB", "KC", "SPLIT")
    return f"{config.rung}:" + ",".join(f"{k}={config.params[k]}" for k in keys
                                        if k in config.params)


for m, n, k in shapes:
    host = [rng.standard_normal(s, dtype=np.float32) for s in ((m, k), (k, n))]
    a, b = side.put(host[0]), side.put(host[1])
    c = side.put(np.zeros((m, n), np.float32))
    flop = 2.0 * m * n * k
    shape = (n, m, k)  # C-ordered: the kernels see N x M
    options: list[tuple[str, Config | None, int | None]] = [("gemm()", None, None)]
    direct = choice.direct_config(be.device, shape)
    if direct is not None:
        options.append(("direct", direct[0], None))
    ranked = lookup.ranked(be.device, TILED, shape, fit=False)
    tiled = [("tiled", ranked[0])] if ranked else []
    reading = next((f for f in ranked if reads_b_itself(f.params)), None)
    if reading is not None and (not ranked or reading is not ranked[0]):
        tiled.append(("tiled, reads B", reading))
    for label, found in tiled:
        config = from_found(found)
        tm, tn, tk = TILED.size_multiples(TILED.resolve(dict(config.params)))
        whole = shape[0] % tm == 0 and shape[1] % tn == 0  # a split needs whole tiles of C
        for split in SPLITS:
            if split == 1 or (whole and k % (split * tk) == 0):
                options.append((f"{label} x{split}", config, split))
                if FLIP_UNROLL and not be.device.is_cpu:
                    flipped = 1 - int(config.params.get("UNROLL_K", 0))
                    options.append((f"{label} x{split} UNROLL_K={flipped}", dataclasses.replace(
                        config, params={**config.params, "UNROLL_K": flipped}), split))
    skinny = [f for f in lookup.ranked(be.device, SKINNY, shape)]
    if skinny and choice.skinny_class(shape):
        options.append(("skinny", from_found(choice._nearest_short_side(shape, skinny)), None))
    anysize = lookup.best(be.device, get_rung(13), shape)
    if anysize is not None:
        options.append(("tiled-any", from_found(anysize), None))
    line = [f"{backend_name} {m}x{n}x{k}"]
    for label, config, split in options:
        forced(config, split)
        try:
            out = clgemm.gemm(a, b, c)
            side.sync()
            err = checked_error(host[0], host[1], side.get(out))
            us = per_call_ms(lambda: clgemm.gemm(a, b, c), side.sync) * 1e3
        except Exception as exc:  # a forced option that cannot run here: say so, go on
            line.append(f"{label}: {type(exc).__name__}")
            continue
        chosen = api.choose_kernel(be.device, n, m, k) if config is None else config
        flag = "" if err < 1e-4 else f" WRONG {err:.1e}"
        line.append(f"{label} {us:.1f} us ({flop / us / 1e3:,.0f}; {short(chosen)}){flag}")
    forced(None)
    if backend_name == "cuda":
        import cupy
        us = per_call_ms(lambda: cupy.matmul(a, b, out=c), side.sync) * 1e3
        line.append(f"cp.matmul {us:.1f} us ({flop / us / 1e3:,.0f})")
    print("; ".join(line), flush=True)
