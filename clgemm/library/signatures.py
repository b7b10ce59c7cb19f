"""One call's program, by its signature: the kernel chosen (or forced), planned, built, tried
and checked once, then found again by the signature alone.

A call's program depends on where in its buffers the matrices lie and how, never on the
buffers; so a program is remembered by that `Signature` (`CACHE.programs`) and every later call
with it only binds its buffers. A stored configuration that fails here (its build, its launch,
or its trial: `library.trial`) is dropped for the rest of the process with a warning and the
next choice is planned instead: a bad database entry slows a call once and never fails it, and
one found wrong by its trial never writes a caller's C. Forced configurations and the kernels'
own defaults fail loudly.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from clgemm.backends import Backend, Mat
from clgemm.configs import choice
from clgemm.configs.configuration import Config
from clgemm.configs.splits import padding_pays, reads_b_as_gemm
from clgemm.core.errors import BuildError, ClgemmError, LaunchError
from clgemm.core.memory_fit import check_memory
from clgemm.library import trial
from clgemm.library.cache import CACHE
from clgemm.library.order import LaunchOrder
from clgemm.library.plan import Plan, new_plan
from clgemm.library.program import CallProgram, build_program
from clgemm.rungs import get_rung

#: stored configurations tried in one call before the kernels' defaults
FALLBACK_TRIES = 4


@dataclass(frozen=True)
class Signature:
    """What a call's program depends on: never the buffers, only where in them and how."""

    backend: Backend
    m: int
    n: int
    k: int
    alpha: float
    beta: float
    a: tuple[int, int, bool]
    b: tuple[int, int, bool]
    c: tuple[int, int]
    kernel: Config | None
    alias: tuple[bool, bool]


def signature_of(be: Backend, plan: Plan, a: Mat, b: Mat, c: Mat,
                 kernel: Config | None, alias: tuple[bool, bool]) -> Signature:
    return Signature(be, plan.m, plan.n, plan.k, float(plan.alpha), float(plan.beta),
                     (a.offset, a.ld, a.trans), (b.offset, b.ld, b.trans), (c.offset, c.ld),
                     kernel, alias)


@dataclass(frozen=True)
class Form:
    """What a program's main kernel is built for beside its configuration
    (`program._main_macros`): the transposes (which the direct kernel is built for), K in
    slices (a batched build), B read where it lies, operands read whole vectors apart. A
    configuration right in one form is a build apart from it in another, so each form a
    call runs has a trial of its own, run in that form."""

    trans: tuple[bool, bool]
    split: int
    reads_b: bool
    padded_ld: bool

    @property
    def key(self) -> tuple[bool, ...]:
        return (*self.trans, self.split > 1, self.reads_b, self.padded_ld)


def form_of(plan: Plan, a: Mat, b: Mat) -> Form:
    return Form((a.trans, b.trans), plan.split, plan.reads_b, plan.padded_ld)


def _new_program(sig: Signature, a: Mat, b: Mat, c: Mat, extra: list[tuple[str, int]],
                 form: Form | None = None) -> CallProgram:
    """The program of a signature: its kernel chosen (or forced), planned, memory checked,
    built, its launches checked, and a stored configuration's first program tried. A trial's
    program is planned in the `form` of the call it tries, not as its own sizes would be."""
    be, shape = sig.backend, (sig.m, sig.n, sig.k)
    for attempt in range(FALLBACK_TRIES + 1):
        plan = Plan(sig.m, sig.n, sig.k, np.float32(sig.alpha), np.float32(sig.beta))
        kernel = sig.kernel
        if kernel is None and plan.use_p and not plan.nothing_to_do:
            kernel = CACHE.choose(be.device, shape)
        if form is not None:
            split, read_b, pads = form.split, form.reads_b, _padded(form.padded_ld)
        else:
            split = 1 if kernel is None else choice.split_for(be.device, kernel, shape)
            read_b = kernel is not None and reads_b_as_gemm(be.device, kernel.rung,
                                                            kernel.params, shape)
            pads = functools.partial(padding_pays, be.device, shape)
        plan = new_plan(sig.m, sig.n, sig.k, plan.alpha, plan.beta, a, b, c, kernel, split,
                        read_b, pads)
        check_memory(be.device, extra + plan.temps)
        failed: Exception | None
        try:
            with be.lock:
                program = build_program(be, plan, a, b, c, sig.alias)
        except BuildError as exc:
            failed = exc
        else:
            program.check_groups(be)
            failed = _trial_verdict(sig, plan, a, b)
        if failed is None:
            return program
        if not _droppable(plan.choice) or attempt == FALLBACK_TRIES:
            raise failed
        CACHE.reject(be.device, plan.choice, failed)  # type: ignore[arg-type]
    raise AssertionError("unreachable")


def _padded(padded_ld: bool) -> Callable[[Sequence[int]], bool]:
    return lambda rows: padded_ld


def _trial_verdict(sig: Signature, plan: Plan, a: Mat, b: Mat) -> Exception | None:
    """Why a stored configuration chosen for this call is wrong on its device in the call's
    form, found by its trial (`library.trial`) the first time a program uses it so here; None
    where it passed, or where the kernel was forced or is the kernels' own default."""
    config = plan.choice
    if sig.kernel is not None or config is None or not _droppable(config) or not trial.ENABLED:
        return None
    form = form_of(plan, a, b)
    return CACHE.tried(sig.backend.device, config, lambda: try_configuration(
        sig.backend, config, (sig.m, sig.n, sig.k), form.trans, sig.alpha, sig.beta, form),
        form.key)


def try_configuration(be: Backend, config: Config, shape: tuple[int, int, int],
                      trans: tuple[bool, bool] = (False, False), alpha: float = 1.0,
                      beta: float = 0.0, form: Form | None = None) -> ClgemmError | None:
    """Run the trial (`library.trial`) of `config` for a column-major call of `shape` now, as
    the first call to use it runs it, in the call's `form` where given (else as gemm() would
    plan the trial's product): None where the result is right, else why it is not (a failed
    build or launch, or the wrong result)."""
    (ta, tb), (m, n, k) = trans, shape
    t = trial.trial_for(m, n, k, ta, tb, alpha, beta,
                        get_rung(config.rung).size_multiples(config.params),
                        split=form.split if form else 1)
    if form is not None:  # the call's slices as two: the same build, a smaller product
        form = dataclasses.replace(form, split=min(form.split, 2))
    try:
        with be.activate(), be.unobserved():
            bufs = [be.to_device(x) for x in t.flat()]
            mats = (Mat(bufs[0], 0, t.lda, ta), Mat(bufs[1], 0, t.ldb, tb), Mat(bufs[2], 0, t.m,
                                                                             False))
            # forced as a user's choice: a failure here is the verdict, not a fallback
            forced = dataclasses.replace(config, source="user")
            tsig = Signature(be, t.m, t.n, t.k, alpha, beta, (0, t.lda, ta), (0, t.ldb, tb),
                             (0, t.m), forced, (False, False))
            program = _new_program(tsig, *mats, [], form)
            with be.lock:
                program.run(LaunchOrder(be, None, []), *bufs)
            be.synchronize()
            got = be.to_host(bufs[2], t.m * t.n)
    except (BuildError, LaunchError) as exc:
        return exc
    return t.judge(got, config.describe())


def _droppable(choice: Config | None) -> bool:
    return choice is not None and choice.source not in ("user", "default")


def program_for(sig: Signature, a: Mat, b: Mat, c: Mat,
             extra: list[tuple[str, int]]) -> CallProgram:
    program: CallProgram = CACHE.remembered(CACHE.programs, sig,
                                            lambda: _new_program(sig, a, b, c, extra))
    return program


def run_program(sig: Signature, program: CallProgram, a: Mat, b: Mat, c: Mat, order: LaunchOrder,
         extra: list[tuple[str, int]],
         fits: Callable[[CallProgram], bool] | None = None) -> CallProgram:
    """Queue the program; a stored configuration that fails to launch is dropped as one that
    fails to build is, and the call runs on the next choice (C is written by the last launch
    only, so a failed attempt leaves C as it was). Returns the program that ran, which is the
    one a repeated call may remember. A next choice that the buffers do not `fit` (a CPU's
    operands read where they lie, placed for the first choice) raises the failure instead: the
    configuration is dropped, so the next call plans anew."""
    for attempt in range(FALLBACK_TRIES + 1):
        try:
            with sig.backend.lock:
                program.run(order, a.buf, b.buf, c.buf)
            return program
        except LaunchError as exc:
            if not _droppable(program.plan.choice) or attempt == FALLBACK_TRIES:
                raise
            CACHE.reject(sig.backend.device, program.plan.choice,  # type: ignore[arg-type]
                         exc)
            program = program_for(sig, a, b, c, extra)
            if fits is not None and not fits(program):
                raise
    raise AssertionError("unreachable")
