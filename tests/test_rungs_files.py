"""Every kernel file stands on its own: it declares each of its parameters with the default its
Python record has (`#ifndef X` / `#define X default`), derives its other macros itself as the
record's `derive` does, and so builds with no -D option at all; the build passes the parameters
alone."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest

from clgemm.core import accuracy
from clgemm.core.kernel_sources import kernel_source
from clgemm.configs.launch import pack_tile
from clgemm.core.paths import KERNELS
from clgemm.configs import launch
from clgemm.rungs import ALL_RUNGS, LIBRARY, REGISTRY, TILED, TRANSPOSE_B, get_rung, panel_helpers

#: `#ifndef NAME` / `#define NAME value` / `#endif`, as every kernel file declares its macros
DECLARED = re.compile(r"^#ifndef (\w+)\n\s*#define \1 ([^\n]*?)\s*(?://[^\n]*)?\n#endif", re.M)
#: the macros a call fixes (the transpositions, a stack of products): not tuned, not in the record
CALL_MACROS = {"direct.cl": {"TRANS_A": 0, "TRANS_B": 0, "BATCHED": 0},
               "tiled.cl": {"BATCHED": 0, "BT_FROM_B": 0, "STACKED_B": 0},
               "skinny.cl": {"BATCHED": 0}, "tiled_any.cl": {"BATCHED": 0, "PADDED_LD": 0}}
#: the helper files, their kernels and the parameters the Python side gives them by default
HELPER_FILES = {
    "helpers.cl": (["transpose", "pack_panels"],
                   {**TRANSPOSE_B.macros,
                    **panel_helpers(TILED.defaults()["TSM"], TILED.defaults()["TSN"])[0].macros}),
    "blas_helpers.cl": (["pack_copy", "pack_transpose", "epilogue", "pack_panels_pair"],
                        {"BATCHED": 0, "PACK_TILE": pack_tile(SimpleNamespace(
                            device=SimpleNamespace(max_work_group_size=1024))),
                         "PANEL_A": TILED.defaults()["TSM"], "PANEL_B": TILED.defaults()["TSN"],
                         "PANEL_RUN": launch.PANEL_RUN, "PACK_SUB": launch.PACK_SUB,
                         "PACK_COLUMNS": 0}),
}


def declared(filename: str) -> dict[str, str]:
    """The macros a file declares with a default, in order: name -> its definition's text."""
    return {m.group(1): m.group(2) for m in DECLARED.finditer((KERNELS / filename).read_text())}


def parameters(filename: str) -> dict[str, int]:
    """The declared macros whose default is a number: the file's parameters."""
    return {k: int(v) for k, v in declared(filename).items() if re.fullmatch(r"-?\d+", v)}


def evaluate(filename: str, params: dict[str, int]) -> dict[str, int]:
    """Every declared macro's value with `params` set, as the preprocessor computes it
    (integer arithmetic on positive values: C's / is Python's //)."""
    values: dict[str, int] = {}
    for name, text in declared(filename).items():
        if name in params:
            values[name] = params[name]
            continue
        expr = re.sub(r"\b([A-Z_][A-Z0-9_]*)\b", lambda m: f"({values[m.group(1)]})", text)
        values[name] = int(eval(expr.replace("/", "//"), {"__builtins__": {}}))
    return values


def record_files():
    return [(r.number, r.file) for r in ALL_RUNGS.values()]


def test_every_kernel_file_is_checked():
    files = {p.name for p in KERNELS.glob("*.cl")}
    assert files == {r.file for r in ALL_RUNGS.values()} | set(HELPER_FILES)
    assert sorted(REGISTRY) == list(range(1, 11)) and sorted(LIBRARY) == [11, 12, 13, 14]


@pytest.mark.parametrize("number,filename", record_files(), ids=[f for _, f in record_files()])
def test_declared_defaults_are_the_records(number, filename):
    rung = get_rung(number)
    assert parameters(filename) == {**rung.defaults(), **CALL_MACROS.get(filename, {})}
    # a declaration for each derived macro too, with no number of its own
    derived = rung.derive(rung.defaults())
    assert set(derived) <= set(declared(filename)) - set(parameters(filename))


@pytest.mark.parametrize("filename", sorted(HELPER_FILES))
def test_helper_defaults_are_what_the_runner_passes(filename):
    assert parameters(filename) == HELPER_FILES[filename][1]


def _parameter_sets(number: int) -> list[dict[str, int]]:
    """The defaults and every single-candidate step away from them that keeps divisibility."""
    rung = get_rung(number)
    base = rung.defaults()
    sets = [base]
    for p in rung.params:
        for value in p.candidates:
            s = {**base, p.name: value}
            if s != base and rung.first_violation(s, None, stages=("divisibility",)) is None:
                sets.append(s)
    return sets


@pytest.mark.parametrize("number,filename", record_files(), ids=[f for _, f in record_files()])
def test_file_derives_what_the_record_derives(number, filename):
    rung = get_rung(number)
    for params in _parameter_sets(number):
        values = evaluate(filename, {**CALL_MACROS.get(filename, {}), **params})
        for name, value in rung.derive(params).items():
            assert values[name] == value, (filename, params, name)
        assert rung.macros(params) == params   # the build passes the parameters alone
        assert rung.all_macros(params) == {**params, **rung.derive(params)}


@pytest.mark.parametrize("number,filename", record_files(), ids=[f for _, f in record_files()])
def test_builds_with_no_options(backend, number, filename):
    rung = get_rung(number)
    backend.build(kernel_source(backend.header(), filename), {}, rung.kernel)


@pytest.mark.parametrize("filename", sorted(HELPER_FILES))
def test_helpers_build_with_no_options(backend, filename):
    source = kernel_source(backend.header(), filename)
    for kernel in HELPER_FILES[filename][0]:
        backend.build(source, {}, kernel)


@pytest.mark.parametrize("number", sorted(ALL_RUNGS))
def test_correct_with_no_options(backend, number):
    """A kernel built without any -D multiplies correctly when launched with its defaults'
    geometry: the file's defaults are the record's (ladder and library kernels alike)."""
    rung = get_rung(number)
    params = rung.defaults()
    if rung.first_violation(params, backend.device.limits()) is not None:
        pytest.skip("the defaults do not fit this device")
    tm, tn = rung.output_tile(params)
    m, n, k = 2 * tm, tn, 3 * rung.k_step(params) + (5 if rung.any_size else 0)
    if rung.any_size:
        m, n = m - 3, n + 5
    rng = np.random.default_rng(number)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    knl = backend.build(kernel_source(backend.header(), rung.file), {}, rung.kernel)
    a_buf = backend.to_device(np.ascontiguousarray(a.ravel(order="F")))
    second = b.T if rung.transposed_b else b
    b_buf = backend.to_device(np.ascontiguousarray(second.ravel(order="F")))
    c_buf = backend.alloc(m * n)
    backend.fill(c_buf, float("nan"), m * n)
    glob, local = rung.geometry(params, m, n)
    backend.launch(knl, glob, local, rung.args(m, n, k, a_buf, b_buf, c_buf))
    c = backend.to_host(c_buf, m * n).reshape((m, n), order="F")
    assert accuracy.relative_error(c, accuracy.reference(a, b)) < 1e-5
