"""A stored configuration whose batched build gives wrong answers on the device, as a compiler
that gets a stack's strides wrong leaves it, is caught by its trial before the first stack that
would run it (clgemm/library/stack_trial.py): the stack runs on the next choice and is right,
with a warning, on every device present. The direct kernel's batched form and the tiled
kernel's each have theirs."""

from __future__ import annotations

import numpy as np
import pytest
from layouts import rand

import clgemm
from clgemm.backends import base
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.library import stack_launch, stack_tiled, trial
from clgemm.library.cache import CACHE
from clgemm.rungs.direct import DIRECT
from clgemm.rungs.tiled import TILED, reads_b_itself

#: configurations no other test builds batched, so that their wrong builds stay with this test
DIRECT_PARAMS = DIRECT.resolve({"TSM": 32, "TSN": 16, "TSK": 4, "WPTM": 4, "WPTN": 2,
                                "PAD": 1})
TILED_PARAMS = TILED.resolve({"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1, "TSM": 32, "TSN": 32,
                              "TSK": 16, "WPTM": 4, "WPTN": 4, "WIDTH": 2, "VWM": 2, "VWN": 2})
#: each product's B found by the stride, made to be the first product's B in every product
#: where a build has the macros of the configuration above, and only there
WRONG = {DIRECT.file: ("const __global float* Bp = B + b_offset + p * b_stride;",
                       "const __global float* Bp = B + b_offset;",
                       "TSM == 32 && TSN == 16 && TSK == 4 && WPTM == 4 && WPTN == 2"),
         TILED.file: ("    BT += z * (stride_b / WIDTH);", "",
                      "TSM == 32 && TSN == 32 && TSK == 16 && WIDTH == 2 && VWM == 2")}


@pytest.fixture
def wrong_strides(every_backend, monkeypatch):
    """Both kernels built from sources whose batched form reads the first product's B for
    every product; a stack's lookup answering with the configurations above as stored ones
    until each is rejected."""
    real_source = base.kernel_source

    def source(header: str, filename: str) -> str:
        text = real_source(header, filename)
        if filename in WRONG:
            right, wrong, where = WRONG[filename]
            assert right in text
            text = text.replace(right, f"\n#if {where}\n{wrong}\n#else\n{right}\n#endif\n")
        return text

    def direct(device, shape, rejected, batch=1):
        if rejected(DIRECT.number, DIRECT_PARAMS):
            return Config(DIRECT.number, DIRECT.resolve(None), "default"), None
        return Config(DIRECT.number, DIRECT_PARAMS, "database"), None

    monkeypatch.setattr(base, "kernel_source", source)
    monkeypatch.setattr(stack_launch, "direct_config", direct)
    monkeypatch.setattr(stack_tiled, "stack_params", lambda *_: (None, False))
    api.clear_caches(backends=True)  # a backend of its own: no build of another test's
    yield api.backend_for(every_backend.device, every_backend.name)
    monkeypatch.undo()
    api.clear_caches(backends=True)  # the backends keep the wrong builds by their macros


def _stored_tiled(monkeypatch):
    """The tiled kernel's batched form for stacks whose sizes are its tiles' multiples, as a
    configuration measured on a stack (B read as it lies), until it is rejected."""
    assert reads_b_itself(TILED_PARAMS)
    tm, tn, tk = TILED.size_multiples(TILED_PARAMS)

    def suits(be, m, n, k, count):
        if m % tm or n % tn or k % tk or CACHE.rejected(be.device, TILED.number, TILED_PARAMS):
            return None, False
        return Config(TILED.number, TILED_PARAMS, "database"), True
    monkeypatch.setattr(stack_tiled, "stack_params", suits)
    return tm, tn, tk


def _stack(rng, shape_a, shape_b):
    a, b = rand(rng, shape_a), rand(rng, shape_b)
    return a, b, np.matmul(a.astype(np.float64), b.astype(np.float64))


def _right(got, want) -> bool:
    return bool(np.isfinite(got).all() and np.abs(got - want).max() < 1e-4 * np.abs(want).max())


def _dropped_after_a_right_stack(be, monkeypatch, kernel: str, seed: int, warning: str):
    """A stack of three on the kernel's stored configuration comes out right with `warning`,
    and the configuration is dropped for the process; returns the tiles the stack used."""
    tm, tn, tk = _stored_tiled(monkeypatch) if kernel == "tiled" else (5, 7, 3)
    a, b, want = _stack(np.random.default_rng(seed), (3, tn, 2 * tk), (3, 2 * tk, tm))
    with pytest.warns(RuntimeWarning, match=warning):
        got = clgemm.gemm(a, b, backend=be)
    assert _right(got, want)
    rung, params = (TILED, TILED_PARAMS) if kernel == "tiled" else (DIRECT, DIRECT_PARAMS)
    assert CACHE.rejected(be.device, rung.number, params)
    return tm, tn, tk


@pytest.mark.parametrize("kernel", ["direct", "tiled"])
def test_the_wrong_builds_give_wrong_stacks_untried(wrong_strides, monkeypatch, kernel):
    """The premise: with no trial, each wrong build gives every product the first one's B."""
    be = wrong_strides
    monkeypatch.setattr(trial, "ENABLED", False)
    tm, tn, tk = _stored_tiled(monkeypatch) if kernel == "tiled" else (5, 7, 3)
    a, b, want = _stack(np.random.default_rng(1), (3, tn, 2 * tk), (3, 2 * tk, tm))
    got = clgemm.gemm(a, b, backend=be)
    assert _right(got[0], want[0]) and not _right(got[1], want[1])


@pytest.mark.parametrize("kernel", ["direct", "tiled"])
def test_a_stored_batched_build_wrong_here_is_dropped_before_use(wrong_strides, monkeypatch,
                                                                 kernel):
    be = wrong_strides
    tm, tn, tk = _dropped_after_a_right_stack(be, monkeypatch, kernel, 2,
                                              "product 2 of a stack gave a wrong result")
    # the next stack neither tries nor warns: it runs on the next choice at once
    a, b, want = _stack(np.random.default_rng(3), (2, tn, tk), (2, tk, tm))
    assert _right(clgemm.gemm(a, b, backend=be), want)


def test_a_right_stored_stack_is_tried_once(every_backend, monkeypatch):
    """A stored configuration right here is tried by the first stack only, in each form: a
    second stack of other sizes and repeated calls run no trial, other transposes one more."""
    be = every_backend
    monkeypatch.setattr(stack_launch, "direct_config", lambda device, shape, rejected, batch=1: (
        Config(DIRECT.number, DIRECT_PARAMS, "database"), None))
    monkeypatch.setattr(stack_tiled, "stack_params", lambda *_: (None, False))
    trials = []
    real = trial.trial_for
    monkeypatch.setattr(trial, "trial_for", lambda *a, **kw: trials.append(a) or real(*a, **kw))
    api.clear_caches()
    rng = np.random.default_rng(4)
    for count, m in ((3, 20), (3, 20), (2, 33)):
        a, b, want = _stack(rng, (count, m, 9), (count, 9, 6))
        assert _right(clgemm.gemm(a, b, backend=be), want)
    assert len(trials) == stack_launch.COUNT
    a, b = rand(rng, (2, 9, 20)), rand(rng, (2, 9, 6))
    assert _right(clgemm.gemm(a, b, trans_a=True, backend=be),
                  np.matmul(np.swapaxes(a, 1, 2).astype(np.float64), b))
    assert len(trials) == 2 * stack_launch.COUNT
    api.clear_caches()


@pytest.mark.parametrize("kernel", ["direct", "tiled"])
def test_a_stored_batched_build_that_fails_is_dropped(wrong_strides, monkeypatch, kernel):
    """A stored configuration whose batched build fails on the device (an `#error` where a
    build has its macros) is dropped as a wrong one is, and the stack runs on the next
    choice."""
    be = wrong_strides
    real_source = base.kernel_source

    def failing(header: str, filename: str) -> str:
        text = real_source(header, filename)
        if filename in WRONG:
            text += f'\n#if {WRONG[filename][2]}\n#error "made to fail"\n#endif\n'
        return text

    monkeypatch.setattr(base, "kernel_source", failing)
    _dropped_after_a_right_stack(be, monkeypatch, kernel, 5, "failed on")
