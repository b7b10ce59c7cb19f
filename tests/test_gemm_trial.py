"""A stored configuration whose kernel gives wrong answers on the device, as a compiler that gets
its edges wrong leaves it, is caught by its trial before the first call that would run it
(clgemm/library/trial.py): that call runs on the next choice and is right, with a warning, on
every device present."""

from __future__ import annotations

import numpy as np
import pytest
from layouts import rand, reference

import clgemm
from clgemm.backends import base
from clgemm.configs import choice
from clgemm.configs.configuration import Config
from clgemm.library import gemm as api
from clgemm.library import signatures, trial
from clgemm.rungs.skinny import SKINNY
from clgemm.rungs.tiled import TILED, reads_b_itself

#: a configuration no other test builds, so that its wrong build stays with this test
PARAMS = {"LR": 8, "LK": 4, "VR": 3, "SB": 12, "KC": 3}
#: the store of the kernel's sums, made to skip a block of rows that R cuts short
STORE = "            if (r < R) {"


def _wrong_at_edges(text: str) -> str:
    assert STORE in text
    return text.replace(STORE, "            if (r < R && r0 + TR <= R) {")


@pytest.fixture
def miscompiled(every_backend, monkeypatch):
    """The skinny kernel built from a source that leaves a partial block of rows unwritten,
    and the lookup answering with PARAMS as a stored configuration until it is rejected. The
    backend is a new one: the shared one keeps its builds by file and macros, and a right build
    of PARAMS that an earlier test of the same process made would hide the wrong one."""
    real_source, real_choose = base.kernel_source, choice.choose_kernel
    params = SKINNY.resolve(PARAMS)
    stored = Config(SKINNY.number, params, "database")

    def source(header: str, filename: str) -> str:
        text = real_source(header, filename)
        return _wrong_at_edges(text) if filename == SKINNY.file else text

    def choose(device, shape, rejected=choice.never, cross=None):
        if not rejected(SKINNY.number, params):
            return stored
        return real_choose(device, shape, rejected, cross)

    monkeypatch.setattr(base, "kernel_source", source)
    monkeypatch.setattr(choice, "choose_kernel", choose)
    api.clear_caches(backends=True)
    yield api.backend_for(every_backend.device), params
    monkeypatch.undo()
    api.clear_caches(backends=True)  # the backends keep the wrong build by its macros


def test_the_wrong_build_gives_wrong_answers_where_forced(miscompiled):
    """The premise: forced (no trial), the build leaves the last rows of a 300-row C unwritten."""
    be, params = miscompiled
    rng = np.random.default_rng(3)
    a, b = rand(rng, (300, 150)), rand(rng, (150, 8))
    c = np.full((300, 8), np.nan, np.float32)
    clgemm.gemm_buffers(300, 8, 150, be.to_device(a.ravel(order="F")),
                        be.to_device(b.ravel(order="F")), out := be.to_device(c.ravel()),
                        backend=be, rung=SKINNY.number, params=params)
    be.synchronize()
    got = be.to_host(out, 300 * 8).reshape(8, 300).T
    assert np.isnan(got[-12:]).all() and np.isfinite(got[:-12]).all()


def test_a_stored_configuration_wrong_here_is_dropped_before_use(miscompiled):
    be, params = miscompiled
    rng = np.random.default_rng(4)
    a, b = rand(rng, (300, 150)), rand(rng, (150, 8))
    with pytest.warns(RuntimeWarning, match="gave a wrong result at"):
        got = clgemm.gemm(a, b, backend=be)
    np.testing.assert_allclose(got, reference(a, b, None, 1.0, 0.0, False, False), rtol=1e-4,
                               atol=1e-4)
    key = (be.device.key, SKINNY.number, tuple(sorted(params.items())))
    assert key in api.CACHE.failed
    verdicts = [v for tried, v in api.CACHE.verdicts.items() if tried[:3] == key]
    assert verdicts and all(isinstance(v, trial.WrongResultError) for v in verdicts)


def test_a_trial_runs_once_per_configuration(every_backend, monkeypatch):
    """A stored configuration that is right here is tried by its first program only: a second
    shape using it, and repeated calls, run no trial."""
    be = every_backend
    stored = Config(SKINNY.number, SKINNY.resolve(PARAMS), "database")
    monkeypatch.setattr(choice, "choose_kernel", lambda device, shape, *rest: stored)
    trials = []
    real = trial.trial_for
    monkeypatch.setattr(trial, "trial_for", lambda *a, **kw: trials.append(a) or real(*a, **kw))
    api.clear_caches()
    rng = np.random.default_rng(5)
    for m in (300, 300, 260):
        a, b = rand(rng, (m, 90)), rand(rng, (90, 5))
        np.testing.assert_allclose(clgemm.gemm(a, b, backend=be),
                                   reference(a, b, None, 1.0, 0.0, False, False), rtol=1e-4,
                                   atol=1e-4)
    assert len(trials) == 1
    api.clear_caches()


#: a configuration of the tiled kernel that can read B where it lies, as a stored one
READS_B = {"PANELS": 0, "CACHE_A": 1, "CACHE_B": 1, "TSM": 32, "TSN": 32, "TSK": 8, "WPTM": 4,
           "WPTN": 4, "WIDTH": 4, "VWM": 4, "VWN": 4}


def test_a_trial_runs_its_calls_form(every_backend, monkeypatch):
    """The trial builds and runs the kernel as its call does (`signatures.Form`): K in
    slices where the call splits it, B read where it lies where the call reads it so, the
    call's transposes; each form is tried once, at a small product."""
    be = every_backend
    stored = Config(TILED.number, TILED.resolve(READS_B), "database")
    assert reads_b_itself(stored.params)
    monkeypatch.setattr(choice, "choose_kernel", lambda device, shape, *rest: stored)
    monkeypatch.setattr(choice, "split_for",
                        lambda device, config, shape: 4 if shape[2] >= 2048 else 1)
    monkeypatch.setattr(signatures, "reads_b_as_gemm", lambda *args: True)
    forms = []
    made, real = signatures._new_program, signatures.try_configuration

    def tried(be_, config, shape, trans, alpha, beta, form):
        def watch(sig, a, b, c, extra, trial_form=None):
            program = made(sig, a, b, c, extra, trial_form)
            forms.append((form, signatures.form_of(program.plan, a, b), program.plan.k))
            return program
        monkeypatch.setattr(signatures, "_new_program", watch)
        try:
            return real(be_, config, shape, trans, alpha, beta, form)
        finally:
            monkeypatch.setattr(signatures, "_new_program", made)
    monkeypatch.setattr(signatures, "try_configuration", tried)
    api.clear_caches()
    rng = np.random.default_rng(6)
    for k in (64, 4096):
        for ta, tb in ((False, False), (True, True)):
            a = rand(rng, (k, 64) if ta else (64, k), order="F")
            b = rand(rng, (96, k) if tb else (k, 96), order="F")
            got = clgemm.gemm(a, b, trans_a=ta, trans_b=tb, backend=be)
            want = reference(a, b, None, 1.0, 0.0, ta, tb)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert len(forms) == 4
    assert all(call.key == ran.key for call, ran, _ in forms)
    assert {(call.split > 1, call.reads_b) for call, _, _ in forms} == {
        (False, True), (True, True), (False, False), (True, False)}
    assert max(k for _, _, k in forms) == 2 * trial.CUT  # two slices of 1024, each cut
    api.clear_caches()
