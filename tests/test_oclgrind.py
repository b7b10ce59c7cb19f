"""Every rung, and the BLAS helper kernels, under Oclgrind: no data race, no out-of-bounds access,
no read of an uninitialised value. Opt-in: `pytest -m oclgrind` (minutes; needs `oclgrind`,
Debian package `oclgrind`).

Each check runs a small Python driver as `oclgrind --data-races --uninitialized python ...`:
Oclgrind preloads its own OpenCL runtime, so the only platform the driver sees is the simulator,
and it writes every diagnostic to a log that must stay empty. Two settings make the run
possible with Oclgrind 21.10 (Debian's):

- PYOPENCL_BUILD_OPTIONS=-cl-opt-disable. With optimisation on, the compiler emits LLVM's
  `freeze` instruction (for `%` and `/`), which 21.10's uninitialised-value plugin does not
  know; it aborts the kernel with "Unsupported instruction: freeze". Unoptimised code is the
  kernel as written, which is what we want to check anyway.
- --local-mem-size 65536. The simulator reports 32 KiB of local memory by default, less than
  rung 9 and 10's double-buffered default tiles need; real GPUs have 48-64 KiB.

A first test plants a race, an out-of-bounds read and an uninitialised read in a toy kernel and
requires the log to report each, so a silent log means something.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clgemm.rungs import REGISTRY, get_rung

pytestmark = [
    pytest.mark.oclgrind,
    pytest.mark.skipif(shutil.which("oclgrind") is None, reason="oclgrind is not installed"),
]

OCLGRIND_FLAGS = ["--data-races", "--uninitialized", "--local-mem-size", "65536"]

#: diagnostic kinds, by the phrases Oclgrind's plugins use
KINDS = {
    "data race": re.compile(r"data race", re.I),
    "out of bounds": re.compile(r"Invalid (read|write)|out of bounds|outside of", re.I),
    "uninitialized": re.compile(r"Uninitiali[sz]ed", re.I),
    "fatal": re.compile(r"FATAL ERROR", re.I),
}


def classify(log: str) -> dict[str, int]:
    return {kind: len(pattern.findall(log)) for kind, pattern in KINDS.items()}


def under_oclgrind(script: str, tmp_path: Path, *args: str, timeout: float = 900):
    log = tmp_path / "oclgrind.log"
    env = dict(os.environ, PYOPENCL_BUILD_OPTIONS="-cl-opt-disable", PYOPENCL_NO_CACHE="1")
    r = subprocess.run(["oclgrind", *OCLGRIND_FLAGS, "--log", str(log), sys.executable, "-c",
                        textwrap.dedent(script), *args],
                       capture_output=True, text=True, timeout=timeout, env=env)
    text = log.read_text() if log.exists() else ""
    return r, text


PLANTED = """
    import numpy as np, pyopencl as cl
    src = '''
    __kernel void bad(__global float* out, const __global float* in) {
        __local float tile[64];
        const int l = get_local_id(0);
        tile[l] = in[get_global_id(0) + 1];       // reads one past the end: out of bounds
        float junk[2];
        if (l == 0) tile[63] = 1.0f;              // races with work-item 63's write, no barrier
        out[get_global_id(0)] = tile[(l + 1) % 64] + junk[l % 2];   // junk: uninitialised
    }
    '''
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    a = np.ones(64, np.float32)
    bi = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
    bo = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, size=a.nbytes)
    cl.Program(ctx, src).build().bad(q, (64,), (64,), bo, bi)
    q.finish()
    print("ran")
"""


def test_oclgrind_reports_planted_bugs(tmp_path):
    r, log = under_oclgrind(PLANTED, tmp_path)
    assert "ran" in r.stdout, r.stderr
    kinds = classify(log)
    assert kinds["data race"] > 0, log
    assert kinds["out of bounds"] > 0, log
    assert kinds["uninitialized"] > 0, log


RUNG_DRIVER = """
    import sys
    import numpy as np
    from clgemm import check
    from clgemm.backends import open_backend
    from clgemm.backends import select_device
    from clgemm.rungs import get_rung
    from clgemm.core.problem import Problem
    from clgemm.configs.launch import prepare
    from clgemm.measure.rung_runner import Workspace

    import json
    number, m, n, k = map(int, sys.argv[1:5])
    dev = select_device("Oclgrind")
    be = open_backend(dev)
    rung = get_rung(number)
    params = rung.resolve(json.loads(sys.argv[5]) if len(sys.argv) > 5 else {})
    rung.validate(params, dev.limits())
    assert rung.size_problem(params, m, n, k) is None
    ws = Workspace(be, Problem(m, n, k), seed=number)
    prepared = prepare(be, rung, params, m, n, k, ws.buf_a, ws.buf_b, ws.buf_c,
                       rung.helpers_for(params), ws.scratch)
    prepared.time_helpers(be)
    be.fill(ws.buf_c, float("nan"), m * n)
    prepared.time_main(be)
    err = check.relative_error(ws.result(), ws.ref)
    print(f"rung {number} {m}x{n}x{k} rel_error {err:.2e}")
    assert err < 1e-4
"""


def rung_sizes(number: int, params: dict | None = None) -> list[tuple[int, int, int]]:
    """Two work-groups along M and two tiles along K (so races across groups and across the
    tile loop's iterations can show); for the any-size rung, edges that cut every tile, once
    with M and N not multiples of the vector width (scalar loads) and once with them (vector
    loads)."""
    rung = get_rung(number)
    params = rung.resolve(params)
    tm, tn = rung.output_tile(params)
    tk = params.get("TSK", 16) if rung.any_size else max(rung.k_step(params), 8)
    if rung.any_size:
        m, n = 2 * tm - (tm // 2 - 3), tn - (tn // 8 + 3)      # 195 x 109 for 128 x 128 tiles
        return [(m, n, 2 * tk + 3), (-(-m // 4) * 4, n // 4 * 4, tk + 5)]
    return [(2 * tm, tn, 2 * tk)]


@pytest.mark.parametrize("number", sorted(REGISTRY), ids=[f"rung{n}" for n in sorted(REGISTRY)])
def test_rung_clean_under_oclgrind(tmp_path, number):
    for m, n, k in rung_sizes(number):
        r, log = under_oclgrind(RUNG_DRIVER, tmp_path, str(number), str(m), str(n), str(k))
        assert r.returncode == 0, r.stdout + r.stderr + log
        assert "rel_error" in r.stdout
        assert log.strip() == "", f"rung {number} {m}x{n}x{k}: {classify(log)}\n{log[:4000]}"


#: the register vectors and local-memory switches of rungs 9 and 10, away from their defaults:
#: wide vectors through local memory, and each operand read straight from global memory
SWITCHES = [{"TSM": 32, "TSN": 32, "TSK": 8, "WPTM": 8, "WPTN": 4, "VWM": 4, "VWN": 4},
            {"TSM": 32, "TSN": 32, "TSK": 8, "WPTM": 16, "WPTN": 8, "WIDTH": 2, "VWM": 16,
             "VWN": 2, "CACHE_A": 0},
            {"TSM": 32, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 4, "WIDTH": 2, "VWM": 8,
             "CACHE_B": 0},
            {"TSM": 16, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 4, "WIDTH": 1, "VWM": 16,
             "CACHE_A": 0, "CACHE_B": 0},
            {"TSM": 32, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 4, "WIDTH": 1, "VWM": 16,
             "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1},
            {"TSM": 32, "TSN": 16, "TSK": 8, "WPTM": 16, "WPTN": 4, "WIDTH": 1, "VWM": 16,
             "CACHE_A": 0, "CACHE_B": 0, "PANELS": 1, "LOCKSTEP": 1}]


@pytest.mark.parametrize("number", (12, 13))
@pytest.mark.parametrize("params", SWITCHES, ids=[f"switches{i}" for i in range(len(SWITCHES))])
def test_register_vectors_and_direct_reads_clean_under_oclgrind(tmp_path, number, params):
    import json

    missing = set(params) - set(get_rung(number).param_names())
    if missing:
        pytest.skip(f"rung {number} has no {', '.join(sorted(missing))}")

    for m, n, k in rung_sizes(number, params):
        r, log = under_oclgrind(RUNG_DRIVER, tmp_path, str(number), str(m), str(n), str(k),
                                json.dumps(params))
        assert r.returncode == 0, r.stdout + r.stderr + log
        assert log.strip() == "", f"rung {number} {params} {m}x{n}x{k}: {classify(log)}\n{log[:4000]}"


BLAS_DRIVER = """
    import sys
    import numpy as np, pyopencl as cl
    from clgemm.library import gemm as api
    from clgemm.backends import select_device

    be = api.backend_for(select_device("Oclgrind"))
    rng = np.random.default_rng(0)
    m, n, k = 37, 29, 19
    mf = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    rung = None if sys.argv[1] == "auto" else int(sys.argv[1])
    order, ta, tb = sys.argv[2], sys.argv[3] == "T", sys.argv[4] == "T"
    a = rng.standard_normal((k, m) if ta else (m, k), dtype=np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n), dtype=np.float32)
    c = rng.standard_normal((m, n), dtype=np.float32)

    def put(x, off, pad):
        s = x if order == "C" else x.T
        flat = np.zeros(off + s.shape[0] * (s.shape[1] + pad), np.float32)
        flat[off:].reshape(s.shape[0], -1)[:, :s.shape[1]] = s
        return cl.Buffer(be.context, mf, hostbuf=flat), s.shape[1] + pad

    (ba, lda), (bb, ldb), (bc, ldc) = put(a, 3, 2), put(b, 5, 1), put(c, 7, 3)
    api.gemm_buffers(m, n, k, ba, bb, bc, alpha=1.5, beta=0.5, trans_a=ta, trans_b=tb,
                     lda=lda, ldb=ldb, ldc=ldc, a_offset=3, b_offset=5, c_offset=7,
                     order=order, backend=be, rung=rung)
    out = np.empty(7 + (m if order == "C" else n) * ldc, np.float32)
    cl.enqueue_copy(be.queue, out, bc).wait()
    got = out[7:].reshape(-1, ldc)[:, :(n if order == "C" else m)]
    got = got if order == "C" else got.T
    ref = 1.5 * (a.T if ta else a).astype(float) @ (b.T if tb else b) + 0.5 * c
    assert np.abs(got - ref).max() < 1e-4 * max(1, np.abs(ref).max())
    print("ok")
"""

#: (rung or "auto", order, trans_a, trans_b). Rung 10 reads A and BT = op(B)^T, so: both
#: operands through pack_transpose; both through pack_copy (row-major swaps A and B and undoes
#: the transposes); one of each; and rung 5, whose tiles the sizes miss, on zero-padded copies.
BLAS_CASES = [("auto", "F", "T", "N"), ("auto", "C", "T", "N"), ("auto", "F", "N", "N"),
              ("5", "F", "N", "T")]


@pytest.mark.parametrize("case", BLAS_CASES, ids=["-".join(c) for c in BLAS_CASES])
def test_blas_helpers_clean_under_oclgrind(tmp_path, case):
    """Both pack kernels (with zero padding where rung 5's tiles need it) and the epilogue with
    beta != 0, through gemm_buffers with offsets and padded leading dimensions. One call per
    process: Oclgrind 21.10's uninitialised-value plugin carries state from one kernel into
    later ones (a pack_copy of fully initialised data, run after an unrelated pack_transpose,
    reads back as uninitialised), so a process that runs several calls reports values no kernel
    left uninitialised."""
    r, log = under_oclgrind(BLAS_DRIVER, tmp_path, *case)
    assert r.returncode == 0, r.stdout + r.stderr + log
    assert "ok" in r.stdout
    assert log.strip() == "", f"{classify(log)}\n{log[:4000]}"
