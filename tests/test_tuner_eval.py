"""Evaluation on the real device: failures of every kind are recorded with their reason and
skipped, and the pre-building pool changes speed, never results.

The failing kernels come from a fake rung defined here, referred to as
"test_tuner_eval:FAKE" so that the spawned worker and builders can import it (a rung holds
lambdas and cannot be pickled). Its MODE parameter picks the behaviour: 1 correct, 2 a compile
error, 3 a wrong result, 4 a kernel that never ends, 5 a process that dies (as a driver crash
would take it down).
"""

from __future__ import annotations

import time

import pytest
from fake_kernels import kernel_file

from clgemm.core.problem import Problem
from clgemm.rungs import Param, Rung
from clgemm.tuner.evaluate import Evaluator
from clgemm.tuner.journal import Journal
from clgemm.tuner.rung_tune import TuneOptions, journal_header, tune_rung
from clgemm.tuner.space import build_space
from clgemm.tuner.worker import ReportingBackend

FAKE_SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_fake(const int M, const int N, const int K,
               const __global float* A, const __global float* B, __global float* C) {
#if MODE == 2
    this line is not OpenCL C;
#endif
    const int m = get_global_id(0);
    const int n = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += A[k * M + m] * B[n * K + k];
#if MODE == 3
    acc += 1.0f;
#endif
#if MODE == 5
    ((volatile __global float*)0)[n * M + m] = acc;  /* a null write: the process dies */
#endif
#if MODE == 4
    volatile __global float* c = C;
    for (;;) { c[n * M + m] = acc; acc += 1.0f; }
#endif
    C[n * M + m] = acc;
}
"""


FAKE = Rung(
    number=99, slug="fake", title="fake rung for failure tests", adds="", file=str(kernel_file("fake-rung", FAKE_SOURCE)),
    kernel="gemm_fake",
    params=(Param("MODE", (1, 2, 3, 4, 5), 1, "1 ok, 2 build error, 3 wrong, 4 never ends, "
                  "5 crash"),
            Param("TS", (8,), 8, "work-group side")),
    derive=lambda p: {}, constraints=(), local_size=lambda p: (p["TS"], p["TS"]),
    output_tile=lambda p: (p["TS"], p["TS"]), k_step=lambda p: 1, local_mem_bytes=lambda p: 0)
REF = "test_tuner_eval:FAKE"


@pytest.mark.parametrize("jobs", [0, 1], ids=["no-prebuild", "prebuild"])
def test_failures_recorded_and_skipped(device, tmp_path, jobs):
    problem = Problem(32, 32, 32)
    space = build_space(FAKE, device.limits(), problem)
    assert len(space) == 5
    options = TuneOptions(strategy="exhaustive", confirm=1, confirm_repeats=2)
    header = journal_header(device, problem, [FAKE], options, 1, 0, "test")
    t0 = time.monotonic()
    with Evaluator(device, problem, repeats=1, warmup=0, jobs=jobs, launch_timeout=4,
                   build_timeout=60) as ev, \
            Journal.open(tmp_path / "j.jsonl", header) as journal:
        out = tune_rung(FAKE, space, journal, ev, options, device=device, problem=problem,
                        ref=REF)
        restarts = ev.restarts
    took = time.monotonic() - t0
    recs = {r["config"]["MODE"]: r for r in journal.results(99)}
    assert set(recs) == {1, 2, 3, 4, 5}
    assert recs[1]["status"] == "ok" and recs[1]["gflops"] > 0
    assert recs[2]["status"] == "build-failed" and "build failed" in recs[2]["message"]
    assert recs[3]["status"] == "wrong" and "relative error" in recs[3]["message"]
    assert recs[4]["status"] == "timeout"
    assert "launch did not finish within 4 s" in recs[4]["message"]
    assert recs[5]["status"] == "crashed"
    assert "worker died during launch (signal 11)" in recs[5]["message"]
    assert restarts == 2  # the workers that hung and died were replaced
    # The failures are skipped: only the good configuration is confirmed and stored.
    assert out.entry is not None and out.entry.params == {"MODE": 1, "TS": 8}
    confirms = journal.results(99, kind="confirm")
    # only the one verified configuration is confirmed, once per alternating round
    from clgemm.tuner.rung_tune import CONFIRM_ROUNDS
    assert [r["config"]["MODE"] for r in confirms] == [1] * CONFIRM_ROUNDS
    assert out.statuses == {"ok": 1, "build-failed": 1, "wrong": 1, "timeout": 1, "crashed": 1}
    if jobs:
        assert all(r["prebuilt"] != "off" for r in recs.values())
    assert took < 60


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


class _Inner:
    name = "fake"
    device = None

    def __init__(self, watched: int):
        self.watched = watched
        self.seen = None

    def launch(self, kernel, global_size, local_size, args):
        time.sleep(0.2)  # give the stop signal time to land
        self.seen = _state(self.watched)
        return 1.0


class _Conn:
    def __init__(self):
        self.sent = []

    def send(self, msg):
        self.sent.append(msg)


def test_builders_held_still_during_launches():
    """On a CPU device the worker stops the pre-builders from its first launch until it lets
    them go, so compiles never share the cores with a timed kernel."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    sibling = ctx.Process(target=time.sleep, args=(30,), daemon=True)
    sibling.start()
    try:
        inner = _Inner(sibling.pid)
        conn = _Conn()
        proxy = ReportingBackend(inner, conn, quiet=[sibling.pid])
        proxy.launch(None, (8, 8), (8, 8), [])
        assert inner.seen == "T"  # stopped during the launch
        time.sleep(0.1)
        assert _state(sibling.pid) == "T"  # and between launches
        proxy.let_go()
        time.sleep(0.1)
        assert _state(sibling.pid) in ("S", "R")  # running again after the last
        assert [m[1] for m in conn.sent] == ["launch", "host"]
    finally:
        sibling.kill()
        sibling.join()


def test_retarget_keeps_the_processes_and_checks_the_new_problem(device):
    """A run of several shapes turns one evaluator from shape to shape: the same measuring
    process and builders, each result checked against the new problem's own reference, and
    what was queued for the last problem dropped."""
    first, second = Problem(32, 32, 32), Problem(48, 40, 24)
    with Evaluator(device, first, repeats=1, warmup=0, jobs=1, launch_timeout=30,
                   build_timeout=60) as ev:
        ev.prebuild(REF, [{"MODE": 1, "TS": 8}])
        assert ev.evaluate(REF, {"MODE": 1, "TS": 8})["status"] == "ok"
        worker, builders = ev.worker.pid, ev.pool.pids()
        ev.prebuild(REF, [{"MODE": 3, "TS": 8}, {"MODE": 2, "TS": 8}])  # one builder: one waits
        assert len(ev.pool.queue) == 1
        ev.retarget(second)
        assert not ev.pool.queue and "dropped" in ev.pool.state.values()
        assert ev.worker is not None and ev.worker.pid == worker
        ok = ev.evaluate(REF, {"MODE": 1, "TS": 8})
        wrong = ev.evaluate(REF, {"MODE": 3, "TS": 8})
        assert ok["status"] == "ok"
        assert ok["gflops"] == pytest.approx(second.flops / (ok["ms"] * 1e6))
        assert wrong["status"] == "wrong"
        assert ev.pool.pids() == builders and ev.worker.pid == worker and ev.restarts == 0
