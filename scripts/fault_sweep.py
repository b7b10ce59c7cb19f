"""A fault and bad-input sweep: hundreds of cases a careless or hostile user could try, each
judged as `right` (a correct result, checked against float64 with C poisoned first), `refused`
(one clear error line: a UsageError/TypeError in Python, exit 2 or 1 at the command line with a
single `error:` line and no traceback), or a failure: `WRONG`, `CRASH` (a traceback or an
unexpected exception), `HANG` (past its time limit).

    python scripts/fault_sweep.py [--device NAME] [--out FILE] [--quick]

Prints one line per failing case and a table of counts per area; exits 1 if any case failed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import clgemm  # noqa: E402
from clgemm.core.errors import ClgemmError

RESULTS: dict[str, Counter] = defaultdict(Counter)
FAILURES: list[str] = []
TMP = Path(tempfile.mkdtemp(prefix="clgemm-faults-"))
# Nothing the sweep runs may write into the user's own results: every command gets a results
# folder and a per-user data folder of its own unless a case sets one.
os.environ["XDG_DATA_HOME"] = str(TMP / "xdg")
os.environ["CLGEMM_RESULTS"] = str(TMP / "results")


def record(area: str, name: str, outcome: str, detail: str = "") -> None:
    RESULTS[area][outcome] += 1
    if outcome not in ("right", "refused"):
        FAILURES.append(f"{area}: {name}: {outcome} {detail}"[:300])
        print(f"  FAIL {area}: {name}: {outcome} {detail}"[:300], flush=True)


def rel_error(got: np.ndarray, want: np.ndarray) -> float:
    got64 = np.asarray(got, dtype=np.float64)
    if not np.all(np.isfinite(got64)) and np.all(np.isfinite(want)):
        return float("inf")
    denom = np.linalg.norm(want) or 1.0
    return float(np.linalg.norm(got64 - want) / denom)


def judge_call(area: str, name: str, fn: Callable[[], Any], want: Any = None,
               expect_error: bool = False, seconds: float = 120.0) -> None:
    """Run `fn` in a thread with a time limit; compare with `want` (a float64 array)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # judged below
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        record(area, name, "HANG")
        return
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, (ValueError, TypeError, ClgemmError)) and "\n" not in str(exc):
            if expect_error:
                record(area, name, "refused", str(exc))
            else:
                record(area, name, "WRONG", f"refused a valid call: {exc}")
        else:
            record(area, name, "CRASH", f"{type(exc).__name__}: {exc}")
        return
    if expect_error:
        record(area, name, "WRONG", "accepted input that should be refused")
        return
    if want is not None:
        got = box["value"]
        if hasattr(got, "get"):
            got = got.get()
        err = rel_error(np.asarray(got), want)
        if not err < 1e-4:
            record(area, name, "WRONG", f"relative error {err:.3g}")
            return
    record(area, name, "right")


def run_cli(args: list[str], env: dict[str, str] | None = None, seconds: float = 120.0,
            stdin: str | None = None) -> tuple[str, int, str, str]:
    """('ok'|'HANG', exit code, stdout, stderr) of `python -m clgemm ARGS`."""
    full_env = {**os.environ, **(env or {})}
    try:
        p = subprocess.run([sys.executable, "-m", "clgemm", *args], capture_output=True,
                           text=True, timeout=seconds, env=full_env, cwd=str(TMP),
                           input=stdin)
    except subprocess.TimeoutExpired:
        return "HANG", -1, "", ""
    return "ok", p.returncode, p.stdout, p.stderr


def judge_cli(area: str, name: str, args: list[str], expect: str, env: dict | None = None,
              seconds: float = 120.0, check: Callable[[str, str], str | None] | None = None
              ) -> None:
    """expect: 'ok' (exit 0), 'refused' (exit 2, one error line), 'error' (exit 1 or 2, one
    error line). `check(stdout, stderr)` returns a complaint or None."""
    state, rc, out, err = run_cli(args, env, seconds)
    if state == "HANG":
        record(area, name, "HANG")
        return
    if "Traceback" in err or "Traceback" in out:
        record(area, name, "CRASH", err.strip().splitlines()[-1] if err.strip() else "")
        return
    errors = [line for line in err.splitlines() if line.startswith("error")]
    if expect == "ok":
        if rc != 0:
            record(area, name, "WRONG", f"exit {rc}: {err.strip()[-200:]}")
            return
        outcome = "right"
    else:
        want_rc = (2,) if expect == "refused" else (1, 2)
        if rc not in want_rc or len(errors) != 1:
            record(area, name, "WRONG", f"exit {rc}, {len(errors)} error lines: "
                                        f"{err.strip()[-200:]}")
            return
        outcome = "refused"
    if check is not None:
        complaint = check(out, err)
        if complaint:
            record(area, name, "WRONG", complaint)
            return
    record(area, name, outcome)


# -- areas -------------------------------------------------------------------------------------
def sweep_blas(device: Any, rng: random.Random, count: int) -> None:
    """gemm() on NumPy arrays: sizes, transposes, orders, scalars, views, strided C."""
    sizes = [0, 1, 2, 3, 7, 16, 31, 33, 64, 65, 100, 127, 129, 200]
    for i in range(count):
        m, n, k = (rng.choice(sizes) for _ in range(3))
        ta, tb = rng.random() < 0.5, rng.random() < 0.5
        alpha = rng.choice([1.0, 0.0, -2.5, 0.5])
        beta = rng.choice([0.0, 1.0, 0.5, -1.0])
        nr = np.random.default_rng(i)
        a_shape = (k, m) if ta else (m, k)
        b_shape = (n, k) if tb else (k, n)

        def make(shape: tuple[int, int]) -> np.ndarray:
            kind = rng.choice(["c", "f", "view", "neg"])
            base = nr.standard_normal((shape[0] * 2 + 1, shape[1] * 2 + 1)).astype(np.float32)
            if kind == "c":
                return np.ascontiguousarray(base[:shape[0], :shape[1]])
            if kind == "f":
                return np.asfortranarray(base[:shape[0], :shape[1]])
            if kind == "view":
                return base[1:1 + 2 * shape[0]:2, :shape[1]]
            return base[shape[0] - 1::-1, :shape[1]] if shape[0] else base[:0, :shape[1]]

        a, b = make(a_shape), make(b_shape)
        opa = a.T.astype(np.float64) if ta else a.astype(np.float64)
        opb = b.T.astype(np.float64) if tb else b.astype(np.float64)
        c_kind = rng.choice(["none", "c", "f", "strided"])
        if c_kind == "none":
            beta = 0.0
            c = None
            want = alpha * (opa @ opb)
        else:
            c0 = nr.standard_normal((m, n)).astype(np.float32)
            if beta == 0:
                c0[...] = np.nan  # beta == 0 never reads C
            if c_kind == "c":
                c = c0.copy()
            elif c_kind == "f":
                c = np.asfortranarray(c0)
            else:
                big = np.full((m, 2 * n + 1), 7.0, np.float32)
                c = big[:, ::2][:, :n]
                c[...] = c0
            want = alpha * (opa @ opb) + (beta * c0.astype(np.float64) if beta != 0 else 0)
        name = (f"{m}x{n}x{k} ta={ta} tb={tb} alpha={alpha} beta={beta} c={c_kind} "
                f"a={a.strides} b={b.strides}")
        judge_call("gemm semantics (NumPy)", name,
                   lambda a=a, b=b, c=c, ta=ta, tb=tb, alpha=alpha, beta=beta: clgemm.gemm(
                       a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb, device=device),
                   want=np.asarray(want, dtype=np.float64))


def sweep_aliasing_numpy(device: Any) -> None:
    nr = np.random.default_rng(5)
    for n in (8, 65, 300):
        s = nr.standard_normal((n, n)).astype(np.float32)
        t = nr.standard_normal((n, n)).astype(np.float32)
        for which in ("a", "b", "both"):
            x = s.copy()
            want = (x.astype(np.float64) @ (x if which == "both" else t).astype(np.float64)
                    if which != "b" else t.astype(np.float64) @ x.astype(np.float64))
            if which == "a":
                fn = lambda x=x, t=t: clgemm.gemm(x, t, x, device=device)
            elif which == "b":
                fn = lambda x=x, t=t: clgemm.gemm(t, x, x, device=device)
            else:
                fn = lambda x=x: clgemm.gemm(x, x, x, device=device)
            judge_call("aliasing", f"numpy {n} C is {which}", fn, want=want)


def sweep_device_arrays(device: Any, tries: int) -> None:
    """pyopencl arrays on in-order and out-of-order queues, C overlapping A or B, events."""
    import pyopencl as cl
    import pyopencl.array as cla
    info = clgemm.devices()[device] if isinstance(device, int) else None
    dev = None
    for p in cl.get_platforms():
        for d in p.get_devices():
            if info is not None and info.name in d.name:
                dev = d
    if dev is None:
        dev = cl.get_platforms()[0].get_devices()[0]
    ctx = cl.Context([dev])
    queues = {"in-order": cl.CommandQueue(ctx)}
    try:
        queues["out-of-order"] = cl.CommandQueue(
            ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
    except cl.Error:
        pass
    nr = np.random.default_rng(11)
    for qname, q in queues.items():
        for n in (256, 512):
            for t in range(tries):
                a = nr.standard_normal((n, n)).astype(np.float32)
                b = nr.standard_normal((n, n)).astype(np.float32)
                want = a.astype(np.float64) @ b.astype(np.float64)
                da, db = cla.to_device(q, a), cla.to_device(q, b)
                judge_call("device arrays and queues", f"{qname} {n}^3 try {t}",
                           lambda da=da, db=db: clgemm.gemm(da, db).get(), want=want)
        for n in (300, 400):
            s = nr.standard_normal((n, n)).astype(np.float32)
            t_ = nr.standard_normal((n, n)).astype(np.float32)
            cases = {
                "C is A": (lambda ds, dt: clgemm.gemm(ds, dt, ds), s.astype(np.float64) @ t_),
                "C is B": (lambda ds, dt: clgemm.gemm(dt, ds, ds), t_.astype(np.float64) @ s),
                "C is A and B": (lambda ds, dt: clgemm.gemm(ds, ds, ds),
                                 s.astype(np.float64) @ s),
                "C is A, out=": (lambda ds, dt: clgemm.gemm(ds, dt, out=ds),
                                 s.astype(np.float64) @ t_),
            }
            for cname, (fn, want) in cases.items():
                ds, dt = cla.to_device(q, s), cla.to_device(q, t_)
                judge_call("aliasing", f"pyopencl {qname} {n}^3 {cname}",
                           lambda fn=fn, ds=ds, dt=dt: (fn(ds, dt), ds.get())[1], want=want)
        # C a view overlapping A's rows
        n = 128
        big = nr.standard_normal((2 * n, n)).astype(np.float32)
        t_ = nr.standard_normal((n, n)).astype(np.float32)
        dbig, dt = cla.to_device(q, big), cla.to_device(q, t_)
        want = big[:n].astype(np.float64) @ t_
        judge_call("aliasing", f"pyopencl {qname} C a view overlapping A",
                   lambda: (clgemm.gemm(dbig[:n], dt, dbig[n // 2:n // 2 + n]),
                            dbig.get()[n // 2:n // 2 + n])[1], want=want)
        # an operand whose upload waits on an event not yet complete: gemm must wait for it
        a = nr.standard_normal((64, 64)).astype(np.float32)
        b = nr.standard_normal((64, 64)).astype(np.float32)
        da, db = cla.empty(q, (64, 64), np.float32), cla.to_device(q, b)
        da.fill(np.float32(np.nan))
        q.finish()
        gate = cl.UserEvent(ctx)
        da.add_event(cl.enqueue_copy(q, da.data, a, wait_for=[gate], is_blocking=False))

        def gated(da=da, db=db, gate=gate) -> np.ndarray:
            c = clgemm.gemm(da, db)
            time.sleep(0.05)
            gate.set_status(cl.command_execution_status.COMPLETE)
            return c.get()
        judge_call("device arrays and queues", f"{qname} operand upload pending", gated,
                   want=a.astype(np.float64) @ b)


def sweep_bad_python(device: Any) -> None:
    a = np.ones((4, 3), np.float32)
    b = np.ones((3, 5), np.float32)
    c = np.zeros((4, 5), np.float32)
    ro = c.copy()
    ro.flags.writeable = False
    bad = {
        "a list": lambda: clgemm.gemm([[1.0]], b, device=device),
        "a float64": lambda: clgemm.gemm(a.astype(np.float64), b, device=device),
        "a int32": lambda: clgemm.gemm(a.astype(np.int32), b, device=device),
        "a complex": lambda: clgemm.gemm(a.astype(np.complex64), b, device=device),
        "a 1-D": lambda: clgemm.gemm(np.ones(3, np.float32), b, device=device),
        "a 0-D": lambda: clgemm.gemm(np.float32(1), b, device=device),
        "inner mismatch": lambda: clgemm.gemm(a, a, device=device),
        "c wrong shape": lambda: clgemm.gemm(a, b, np.zeros((5, 4), np.float32), device=device),
        "c read-only": lambda: clgemm.gemm(a, b, ro, device=device),
        "c float64": lambda: clgemm.gemm(a, b, c.astype(np.float64), device=device),
        "alpha bool": lambda: clgemm.gemm(a, b, alpha=True, device=device),
        "alpha str": lambda: clgemm.gemm(a, b, alpha="1", device=device),
        "alpha None": lambda: clgemm.gemm(a, b, alpha=None, device=device),
        "alpha huge int": lambda: clgemm.gemm(a, b, alpha=10**400, device=device),
        "alpha 1e39": lambda: clgemm.gemm(a, b, alpha=1e39, device=device),
        "beta without c": lambda: clgemm.gemm(a, b, beta=1.0, device=device),
        "trans_a str": lambda: clgemm.gemm(a, b, trans_a="yes", device=device),
        "trans_b int": lambda: clgemm.gemm(a, b, trans_b=1, device=device),
        "device ''": lambda: clgemm.gemm(a, b, device=""),
        "device ' '": lambda: clgemm.gemm(a, b, device=" "),
        "device 999": lambda: clgemm.gemm(a, b, device=999),
        "device -1": lambda: clgemm.gemm(a, b, device=-1),
        "device no such name": lambda: clgemm.gemm(a, b, device="no-such-device"),
        "backend metal": lambda: clgemm.gemm(a, b, backend="metal"),
        "backend 3": lambda: clgemm.gemm(a, b, backend=3),
        "c and out both": lambda: clgemm.gemm(a, b, c, out=c, device=device),
        "unknown keyword": lambda: clgemm.gemm(a, b, gamma=1, device=device),
        "gemm_buffers m negative": lambda: clgemm.gemm_buffers(-1, 2, 2, None, None, None),
        "gemm_buffers numpy": lambda: clgemm.gemm_buffers(2, 2, 2, a, b, c),
        "gemm_buffers order X": lambda: clgemm.gemm_buffers(2, 2, 2, a, b, c, order="X"),
        "configure shape 2 dims": lambda: clgemm.configure(device, shape=(2, 2)),
        "configure shape 0": lambda: clgemm.configure(device, shape=0),
        "configure shape -5": lambda: clgemm.configure(device, shape=-5),
        "configure rung 99": lambda: clgemm.configure(device, rung=99),
        "configure rung 'nope'": lambda: clgemm.configure(device, rung="nope"),
        "configure rung '1-3'": lambda: clgemm.configure(device, rung="1-3"),
        "tune rungs bad": lambda: clgemm.tune(device=device, rungs="zz"),
        "tune shape 0": lambda: clgemm.tune(device=device, rungs="1", shapes=[0], budget=1),
        "tune budget 0": lambda: clgemm.tune(device=device, rungs="1", shapes=[32], budget=0),
    }
    for name, fn in bad.items():
        judge_call("bad input (Python)", name, fn, expect_error=True)
    good = {
        "out=": (lambda: clgemm.gemm(a, b, out=c.copy(), device=device),
                 a.astype(np.float64) @ b),
        "alpha numpy float": (lambda: clgemm.gemm(a, b, alpha=np.float32(2), device=device),
                              2 * a.astype(np.float64) @ b),
        "alpha int": (lambda: clgemm.gemm(a, b, alpha=3, device=device),
                      3 * a.astype(np.float64) @ b),
        "trans numpy bool": (lambda: clgemm.gemm(a.T.copy(), b, trans_a=np.True_,
                                                 device=device), a.astype(np.float64) @ b),
        "alpha 1e-30": (lambda: clgemm.gemm(a, b, alpha=1e-30, device=device),
                        1e-30 * (a.astype(np.float64) @ b)),
        "alpha NaN given as such": (lambda: np.isnan(clgemm.gemm(a, b, alpha=float("nan"),
                                                                  device=device)).all(), None),
    }
    for name, (fn, want) in good.items():
        if want is None:  # fn says itself whether the result is right
            judge_call("bad input (Python)", f"valid: {name}",
                       lambda fn=fn: np.zeros(1) if fn() else np.full(1, np.nan),
                       want=np.zeros(1))
        else:
            judge_call("bad input (Python)", f"valid: {name}", fn, want=np.asarray(want))


def _db(entries: list, key: str = "opencl-x") -> dict:
    return {"format": "clgemm-tuning-database", "version": 2, "device": key,
            "backend": "opencl", "entries": entries}


def sweep_files(device_key: str, gemm_check: bool = True) -> None:
    """Broken databases, journals and records: gemm() still right, commands one line."""
    entry = {"rung": 3, "shape": [64, 64, 64], "backend": "opencl", "params": {"TS": 8, "WPT": 8},
             "ms": 1.0, "gflops": 1.0}
    db_variants: dict[str, Any] = {
        "deep nesting": "[" * 200_000,
        "not utf-8": b"\xff\xfe{\x00",
        "empty": "",
        "truncated": json.dumps(_db([entry], device_key))[:-7],
        "a list": "[]",
        "other format": json.dumps({"format": "something-else"}),
        "entries not a list": json.dumps({**_db([], device_key), "entries": 5}),
        "unknown parameter": json.dumps(_db([{**entry, "params": {"OLDPARAM": 1}}], device_key)),
        "negative TS": json.dumps(_db([{**entry, "params": {"TS": -8, "WPT": 8}}], device_key)),
        "huge TS": json.dumps(_db([{**entry, "params": {"TS": 10**30, "WPT": 8}}], device_key)),
        "float TS": json.dumps(_db([{**entry, "params": {"TS": 8.5, "WPT": 8}}], device_key)),
        "string TS": json.dumps(_db([{**entry, "params": {"TS": "8 -DX=1", "WPT": 8}}],
                                    device_key)),
        "macro injection name": json.dumps(_db([{**entry, "params": {"TS=8 -DX": 1}}],
                                               device_key)),
        "zero shape": json.dumps(_db([{**entry, "shape": [0, 64, 64]}], device_key)),
        "NaN gflops": json.dumps(_db([{**entry, "gflops": float("nan")}], device_key)),
        "negative gflops": json.dumps(_db([{**entry, "gflops": -5}], device_key)),
        "rung 99": json.dumps(_db([{**entry, "rung": 99}], device_key)),
        "rung string": json.dumps(_db([{**entry, "rung": "3"}], device_key)),
        "entry a string": json.dumps(_db(["x"], device_key)),
        "version 99": json.dumps({**_db([entry], device_key), "version": 99}),
        "FIFO": "fifo",
        "folder": "folder",
        "symlink loop": "loop",
    }
    a = np.random.default_rng(1).standard_normal((48, 40)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((40, 56)).astype(np.float32)
    want = a.astype(np.float64) @ b
    script = ("import numpy as np, sys, clgemm; a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); "
              "np.save(sys.argv[3], clgemm.gemm(a, b))")
    np.save(TMP / "a.npy", a)
    np.save(TMP / "b.npy", b)
    for name, content in db_variants.items():
        root = TMP / f"db-{abs(hash(name))}"
        root.mkdir(exist_ok=True)
        path = root / f"{device_key}.json"
        if content == "fifo":
            os.mkfifo(path)
        elif content == "folder":
            path.mkdir()
        elif content == "loop":
            os.symlink(path, path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        env = {"CLGEMM_RESULTS": str(root), "PYTHONPATH": str(ROOT)}
        out = TMP / "c.npy"
        if gemm_check:
            try:
                p = subprocess.run([sys.executable, "-c", script, str(TMP / "a.npy"),
                                    str(TMP / "b.npy"), str(out)], env={**os.environ, **env},
                                   capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                record("files", f"gemm() with database: {name}", "HANG")
            else:
                if p.returncode != 0:
                    record("files", f"gemm() with database: {name}", "CRASH",
                           p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "")
                else:
                    err = rel_error(np.load(out), want)
                    record("files", f"gemm() with database: {name}",
                           "right" if err < 1e-4 else "WRONG", f"{err:.3g}")
        for cmd in (["devices"], ["ladder", "--size", "32", "--rungs", "1-2", "--repeats", "1"]):
            judge_cli("files", f"{cmd[0]} with database: {name}", cmd, "ok", env)
        judge_cli("files", f"tune into database: {name}",
                  ["tune", "--rungs", "1", "--size", "32", "--budget", "1",
                   "--database", str(path), "--journal", str(root / "j.jsonl")],
                  "ok" if name in ("unknown parameter", "negative TS", "huge TS", "float TS",
                                   "string TS", "macro injection name", "zero shape",
                                   "NaN gflops", "negative gflops", "rung 99", "rung string",
                                   "entry a string")
                  else "error", {"CLGEMM_RESULTS": str(root)})
    # readers given a file on the command line
    deep = TMP / "deep.json"
    deep.write_text("[" * 200_000)
    fifo = TMP / "fifo.json"
    if not fifo.exists():
        os.mkfifo(fifo)
    for label, path in (("deep", deep), ("FIFO", fifo), ("missing", TMP / "missing.json"),
                        ("folder", TMP)):
        for args in (["verify", "--replay", str(path)],
                     ["model", "--device-record", str(path)],
                     ["bench", "--call", "--sizes", "32", "--clblast-params", str(path)],
                     ["tune", "--compare-strategies", str(path)],
                     ["tune", "--rungs", "1", "--size", "32", "--budget", "1", "--database",
                      str(path)]):
            # a database named but not there yet is where the tune starts one
            expect = "ok" if label == "missing" and "--database" in args else "error"
            judge_cli("files", f"{args[0]} {args[1]} {label}", args, expect, seconds=60)
    # journals
    journal_dir = TMP / "journals"
    journal_dir.mkdir(exist_ok=True)
    journal_cases = {
        "deep": "[" * 200_000,
        "huge int": None,
        "negative value": None,
        "not a journal": "hello\nworld\n",
        "torn tail": None,
    }
    for name, text in journal_cases.items():
        root = TMP / f"jr-{abs(hash(name))}"
        root.mkdir(exist_ok=True)
        journal = root / "j.jsonl"
        base = ["tune", "--rungs", "3", "--size", "32", "--budget", "2", "--journal",
                str(journal), "--database", str(root / "db.json")]
        env = {"CLGEMM_RESULTS": str(root)}
        if text is None:
            state, rc, _, err = run_cli(base, env)
            if state == "HANG" or rc != 0:
                record("files", f"journal {name}: first tune", "CRASH", err[-200:])
                continue
            lines = journal.read_text().splitlines()
            recs = [json.loads(x) for x in lines]
            for r in recs:
                if "config" in r:
                    if name == "huge int":
                        r["config"] = {k: 10**30 for k in r["config"]}
                    elif name == "negative value":
                        r["config"] = {k: -16 for k in r["config"]}
            body = "\n".join(json.dumps(r) for r in recs) + "\n"
            if name == "torn tail":
                body += '{"kind": "search", "con'
            journal.write_text(body)
        else:
            journal.write_text(text)
        judge_cli("files", f"journal {name}: tune again", base,
                  "ok" if text is None else "error", env)


def sweep_cli() -> None:
    area = "command line"
    refused = {
        "--device ''": ["ladder", "--device", "", "--size", "32"],
        "--device ' '": ["ladder", "--device", " ", "--size", "32"],
        "--device 99": ["ladder", "--device", "99", "--size", "32"],
        "--device -1": ["ladder", "--device", "-1", "--size", "32"],
        "--backend metal": ["ladder", "--backend", "metal"],
        "--size 0": ["ladder", "--size", "0"],
        "--size -5": ["ladder", "--size", "-5"],
        "--size abc": ["ladder", "--size", "abc"],
        "--size 200000": ["ladder", "--size", "200000"],
        "--size 30000 --rungs 10": ["ladder", "--size", "30000", "--rungs", "10"],
        "--rungs 0": ["ladder", "--rungs", "0"],
        "--rungs 14": ["ladder", "--rungs", "14"],
        "--rungs 3-1": ["ladder", "--rungs", "3-1"],
        "--rungs ,": ["ladder", "--rungs", ","],
        "--rungs nope": ["ladder", "--rungs", "nope"],
        "--repeats 0": ["ladder", "--repeats", "0", "--size", "32"],
        "--repeats -1": ["ladder", "--repeats", "-1", "--size", "32"],
        "-p bad": ["ladder", "-p", "bad", "--size", "32"],
        "-p 3:WPT=-1": ["ladder", "-p", "3:WPT=-1", "--size", "32"],
        "-p 4:WIDTH=16": ["ladder", "-p", "4:WIDTH=16", "--size", "32"],
        "-p 3:NOPE=1": ["ladder", "-p", "3:NOPE=1", "--size", "32"],
        "--mnk 1 2": ["ladder", "--mnk", "1", "2"],
        "--size and --mnk": ["ladder", "--size", "32", "--mnk", "32", "32", "32"],
        "show 0": ["show", "0"],
        "show 99": ["show", "99"],
        "show nope": ["show", "nope"],
        "explain 0": ["explain", "0"],
        "explain nope": ["explain", "nope"],
        "model --rung 99": ["model", "--rung", "99"],
        "bench --arrays numpy without --call": ["bench", "--arrays", "numpy", "--sizes", "32"],
        "bench --sizes 0": ["bench", "--sizes", "0"],
        "bench --sizes x": ["bench", "--sizes", "x"],
        "bench --sizes 1x2": ["bench", "--sizes", "1x2"],
        "tune --budget 0": ["tune", "--rungs", "1", "--size", "32", "--budget", "0"],
        "tune --budget -3": ["tune", "--rungs", "1", "--size", "32", "--budget", "-3"],
        "tune --time -1": ["tune", "--rungs", "1", "--size", "32", "--time", "-1"],
        "tune --strategy nope": ["tune", "--rungs", "1", "--size", "32", "--strategy", "nope"],
        "tune --only bad": ["tune", "--rungs", "3", "--size", "32", "--only", "bad"],
        "tune --only NOPE=1": ["tune", "--rungs", "3", "--size", "32", "--only", "NOPE=1"],
        "tune --jobs -1": ["tune", "--rungs", "1", "--size", "32", "--jobs", "-1"],
        "unknown command": ["frobnicate"],
        "unknown option": ["ladder", "--frobnicate"],
        "--json to a folder": ["devices", "--json", "/tmp"],
        "--json in /proc": ["devices", "--json", "/proc/x.json"],
        "--csv in a missing root folder of a file": ["devices", "--csv", "/etc/passwd/x.csv"],
    }
    for name, args in refused.items():
        judge_cli(area, name, args, "refused")
    env_refused = {
        "CLGEMM_DEVICE=' '": {"CLGEMM_DEVICE": " "},
        "CLGEMM_DEVICE=99": {"CLGEMM_DEVICE": "99"},
        "CLGEMM_DEVICE=nope": {"CLGEMM_DEVICE": "nope"},
    }
    for name, env in env_refused.items():
        judge_cli(area, name, ["ladder", "--size", "32", "--rungs", "1"], "refused", env)
    ok = {
        "explain direct": ["explain", "direct"],
        "explain tiled": ["explain", "tiled"],
        "show tiled": ["show", "tiled"],
        "show direct": ["show", "direct"],
        "show tiled-any": ["show", "tiled-any"],
        "model --rung direct": ["model", "--rung", "direct", "--size", "256"],
        "model --rung tiled": ["model", "--rung", "tiled", "--size", "256"],
        "ladder --size 100": ["ladder", "--size", "100", "--repeats", "1", "--warmup", "0"],
        "bench --call --sizes 1": ["bench", "--call", "--sizes", "1", "--repeats", "3"],
        "verify --quick --rungs 1": ["verify", "--quick", "--rungs", "1"],
        "devices --json -": ["devices", "--json", "-"],
    }
    for name, args in ok.items():
        judge_cli(area, name, args, "ok", seconds=300)
    # write failures: one line, nothing half written
    judge_cli("write failures", "--json /dev/full", ["devices", "--json", "/dev/full"], "error")
    judge_cli("write failures", "--csv /dev/full", ["devices", "--csv", "/dev/full"], "error")
    ro = TMP / "readonly"
    ro.mkdir(exist_ok=True)
    os.chmod(ro, 0o555)
    if os.geteuid() != 0:
        judge_cli("write failures", "--json in a read-only folder",
                  ["devices", "--json", str(ro / "x.json")], "refused")
    lockdir = TMP / "lockdir"
    lockdir.mkdir(exist_ok=True)
    (lockdir / "db.json.lock").mkdir(exist_ok=True)
    judge_cli("write failures", "folder at the database's lock",
              ["tune", "--rungs", "1", "--size", "32", "--budget", "1", "--database",
               str(lockdir / "db.json"), "--journal", str(lockdir / "j.jsonl")], "error",
              {"CLGEMM_RESULTS": str(lockdir)})
    full = TMP / "full"
    full.mkdir(exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)],
                             capture_output=True).returncode == 0
    if mounted:
        try:
            (full / "filler").write_bytes(b"x" * 60_000)
            judge_cli("write failures", "tune into a full folder",
                      ["tune", "--rungs", "1", "--size", "32", "--budget", "2"], "error",
                      {"CLGEMM_RESULTS": str(full)},
                      check=lambda o, e: None if not any(
                          p.is_file() and p.stat().st_size == 0 and p.suffix != ".lock"
                          for p in full.rglob("*"))
                      else "left an empty file")
            judge_cli("write failures", "--json onto a full disk",
                      ["devices", "--json", str(full / "out.json")], "error",
                      check=lambda o, e: "left a file" if (full / "out.json").exists()
                      else None)
        finally:
            subprocess.run(["umount", str(full)], capture_output=True)


def sweep_concurrency() -> None:
    root = TMP / "concurrent"
    root.mkdir(exist_ok=True)
    env = {**os.environ, "CLGEMM_RESULTS": str(root)}
    for attempt in range(2):
        journal = root / f"same-{attempt}.jsonl"
        procs = [subprocess.Popen([sys.executable, "-m", "clgemm", "tune", "--rungs", "3",
                                   "--size", "48", "--budget", "3", "--journal", str(journal)],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, cwd=str(TMP)) for _ in range(4)]
        outs = [p.communicate(timeout=300) for p in procs]
        for i, (p, (_, err)) in enumerate(zip(procs, outs)):
            if "Traceback" in err:
                record("concurrency", f"same journal {attempt} run {i}", "CRASH", err[-200:])
            elif p.returncode == 0:
                record("concurrency", f"same journal {attempt} run {i}", "right")
            elif p.returncode == 2 and "in use" in err:
                record("concurrency", f"same journal {attempt} run {i}", "refused")
            else:
                record("concurrency", f"same journal {attempt} run {i}", "WRONG", err[-200:])
    # the same tune twice in a row: the second reuses the first's measurements
    base = ["tune", "--rungs", "3", "--size", "48", "--budget", "3"]
    judge_cli("concurrency", "same tune twice: first", base, "ok",
              {"CLGEMM_RESULTS": str(root / "twice")})
    judge_cli("concurrency", "same tune twice: second", base, "ok",
              {"CLGEMM_RESULTS": str(root / "twice")})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    start = time.time()
    devices = clgemm.devices()
    device = 0
    if args.device:
        device = next(i for i, d in enumerate(devices) if args.device.lower() in d.name.lower())
    info = devices[device]
    print(f"fault sweep on {info.name} ({info.backend}); temporary files in {TMP}", flush=True)
    rng = random.Random(20261124)
    sweep_blas(device, rng, 60 if args.quick else 230)
    sweep_aliasing_numpy(device)
    sweep_device_arrays(device, 5 if args.quick else 30)
    sweep_bad_python(device)
    sweep_cli()
    sweep_files(info.key, gemm_check=not args.quick)
    sweep_concurrency()
    total = Counter()
    lines = []
    lines.append(f"{'area':34} {'cases':>6} {'right':>6} {'refused':>8} {'failed':>7}")
    for area, counts in RESULTS.items():
        failed = sum(v for k, v in counts.items() if k not in ("right", "refused"))
        n = sum(counts.values())
        total.update(counts)
        lines.append(f"{area:34} {n:6} {counts['right']:6} {counts['refused']:8} {failed:7}")
    failed = sum(v for k, v in total.items() if k not in ("right", "refused"))
    lines.append(f"{'all':34} {sum(total.values()):6} {total['right']:6} "
                 f"{total['refused']:8} {failed:7}")
    head = (f"# python scripts/fault_sweep.py{' --quick' if args.quick else ''}"
            f"{' --device ' + args.device if args.device else ''} on {info.name} "
            f"({info.backend}, driver {info.driver_version}); "
            f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}; clgemm "
            f"{clgemm.__version__}, Python {platform.python_version()}, NumPy {np.__version__}; "
            f"{time.time() - start:.0f} s")
    text = "\n".join([head, *lines, *(["", "failures:"] + FAILURES if FAILURES else [])]) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
