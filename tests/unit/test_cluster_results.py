"""The cluster's driver when a worker dies after finishing a task but before handing over its
record: the task is then rerun where only that worker may run it, which never happens, so
waiting for the record would hang the tune. Made-up futures and client: no cluster, no
device."""

from __future__ import annotations

from typing import Any

import pytest
from made_up import GPU

from clgemm.core.problem import Problem
from clgemm.tuner import cluster

ADDRESS = "tcp://127.0.0.1:1"


class MadeUpFuture:
    def __init__(self, record: dict | None):
        self.record, self.status, self.cancelled = record, "finished", False

    def result(self, timeout: float | None = None) -> dict:
        if self.record is None:  # the worker that held it is gone
            raise TimeoutError(f"no result within {timeout} s")
        return self.record

    def cancel(self) -> None:
        self.cancelled = True


class MadeUpClient:
    """Hands out futures in order: the first one's record never arrives."""

    def __init__(self) -> None:
        self.futures = [MadeUpFuture(None), MadeUpFuture({"status": "ok", "ms": 1.0})]
        self.submitted: list[MadeUpFuture] = []

    def submit(self, *args: Any, **kwargs: Any) -> MadeUpFuture:
        future = self.futures[len(self.submitted)]
        self.submitted.append(future)
        return future


@pytest.fixture
def evaluator(monkeypatch) -> cluster.ClusterEvaluator:
    monkeypatch.setattr(cluster, "wait", lambda futures, **kw: (set(futures), set()))
    monkeypatch.setattr(cluster.ClusterEvaluator, "workers", lambda self: [ADDRESS])
    notes: list[str] = []
    ev = cluster.ClusterEvaluator(MadeUpClient(), GPU, Problem(32, 32, 32), repeats=1,
                                  warmup=0, note=notes.append)
    ev.notes = notes  # type: ignore[attr-defined]
    return ev


def test_a_record_that_never_arrives_sends_its_configuration_back(evaluator):
    records = list(evaluator.evaluate_many(0, [{"TS": 8}]))
    lost, measured = evaluator.client.submitted
    assert lost.cancelled and not measured.cancelled
    assert records == [{"status": "ok", "ms": 1.0, "params": {"TS": 8}}]
    assert evaluator.requeued == 1
    assert any("goes back to the queue" in n for n in evaluator.notes)


def test_a_confirmation_whose_record_never_arrives_runs_again(evaluator):
    assert evaluator.evaluate(0, {"TS": 8}) == {"status": "ok", "ms": 1.0, "params": {"TS": 8}}
    assert [f.cancelled for f in evaluator.client.submitted] == [True, False]
