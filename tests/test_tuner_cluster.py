"""The cluster tune on a local Dask cluster of two workers on the CPU device: every
configuration recorded once, the confirmation on one worker, and a worker killed in the middle
of an evaluation losing nothing.

The worker is killed from inside its own measuring process by the rung `KILLER` defined here
(referred to as "test_tuner_cluster:KILLER", so that the workers' measuring processes can
import it). Its parameter MODE=6 kills the Dask worker that measures it, once: the measuring
process working out the work-group checks that its grandparent is this test's process (the local
cluster's nannies run in it), so the test process itself, whose parent is pytest's, or a worker
never kill anything, and a marker file makes it happen once.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from fake_kernels import kernel_file

pytest.importorskip("distributed")

import clgemm  # noqa: E402
from clgemm.configs import lookup  # noqa: E402
from clgemm.configs.database import Entry, database_path, load  # noqa: E402
from clgemm.core.errors import UsageError  # noqa: E402
from clgemm.core.problem import Problem  # noqa: E402
from clgemm.rungs import Param, Rung  # noqa: E402
from clgemm.tuner.cluster import (Cluster, ClusterEvaluator, ClusterSpec,  # noqa: E402
                                  builders_here)
from clgemm.tuner.journal import Journal  # noqa: E402
from clgemm.tuner.rung_tune import TuneOptions, journal_header, tune_rung  # noqa: E402
from clgemm.tuner.space import build_space  # noqa: E402
from clgemm.tuner.worker import parent_pid  # noqa: E402

SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void gemm_killer(const int M, const int N, const int K,
                 const __global float* A, const __global float* B, __global float* C) {
    const int m = get_global_id(0);
    const int n = get_global_id(1);
    float acc = 0.0f;
    for (int k = 0; k < K; k++) acc += A[k * M + m] * B[n * K + k];
    C[n * M + m] = acc;
}
"""
MARKER = "CLGEMM_TEST_KILL_MARKER"
DRIVER = "CLGEMM_TEST_DRIVER_PID"


def _local_size(params: dict) -> tuple[int, int]:
    """The work-group; and MODE=6 kills the Dask worker measuring it, once (see the module's
    docstring)."""
    marker, driver = os.environ.get(MARKER), os.environ.get(DRIVER)
    if params.get("MODE") == 6 and marker and driver:
        worker = os.getppid()
        if parent_pid(worker) == int(driver):
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return params["TS"], params["TS"]
            os.kill(worker, signal.SIGKILL)
    return params["TS"], params["TS"]


KILLER = Rung(
    number=98, slug="killer", title="a rung that kills its worker once", adds="",
    file=str(kernel_file("killer-rung", SOURCE)), kernel="gemm_killer",
    params=(Param("MODE", (1, 6), 1, "6: kill the measuring worker, once"),
            Param("TS", (4, 8), 8, "work-group side"),
            Param("X", (1, 2, 3), 1, "a parameter for the count")),
    derive=lambda p: {}, constraints=(), local_size=_local_size,
    output_tile=lambda p: (p["TS"], p["TS"]), k_step=lambda p: 1, local_mem_bytes=lambda p: 0)
REF = "test_tuner_cluster:KILLER"


def _search_records(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return [r for r in lines if r.get("kind") == "search"]


def test_two_workers_record_every_configuration_once(device, tmp_path, monkeypatch):
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    # The search's first batch is what the lookup knows, and a worker pre-builds only its share
    # of a batch of several: so that one is, whatever this machine's shipped tuning holds, the
    # shipped databases are not read and two stored entries stand in for them.
    monkeypatch.setenv("CLGEMM_SHIPPED_TUNING", "0")
    known = load(device, database_path(device.key, tmp_path))
    known.entries = [Entry(2, [64, 64, 64], device.backend, {"TS": ts}, 1.0, gflops)
                     for ts, gflops in ((8, 2.0), (32, 1.0))]
    known.save()
    lookup.forget()
    db = tmp_path / "db.json"
    result = clgemm.tune(device, rungs=2, shapes=64, exhaustive=True, cluster=True, workers=2,
                         confirm=2, database=db, verbose=False)
    [journal] = result.journals
    search = _search_records(journal)
    configs = [r["config"]["TS"] for r in search]
    assert sorted(configs) == [4, 8, 16, 32]  # each once
    assert all(r["status"] == "ok" for r in search)
    assert all(r["ran_on"]["index"] == device.index for r in search)
    assert len({r["ran_on"]["worker"] for r in search}) == 2  # both workers measured
    # each worker pre-built its share of the batch while it measured its first configuration
    assert all(r["prebuilt"] != "off" for r in search)
    assert any(str(r["prebuilt"]).startswith("done") for r in search)
    lines = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    confirms = [r for r in lines if r.get("kind") == "confirm"]
    assert confirms and len({r["ran_on"]["worker"] for r in confirms}) == 1
    assert (2, (64, 64, 64)) in result.configs and db.exists()


def test_a_worker_killed_mid_run_loses_nothing(device, tmp_path, monkeypatch):
    monkeypatch.setenv(MARKER, str(tmp_path / "killed"))
    monkeypatch.setenv(DRIVER, str(os.getpid()))
    problem = Problem(32, 32, 32)
    space = build_space(KILLER, device.limits(), problem, heuristics=False)
    assert len(space) == 12
    options = TuneOptions(strategy="exhaustive", confirm=1, confirm_repeats=2)
    header = journal_header(device, problem, [KILLER], options, 1, 0, "test")
    notes: list[str] = []
    with Cluster(ClusterSpec(workers=2), [device]) as cluster, \
            Journal.open(tmp_path / "j.jsonl", header) as journal:
        ev = ClusterEvaluator(cluster.client, device, problem, repeats=1, warmup=0,
                              note=notes.append, no_worker_timeout=120)
        assert ev.width == 2
        out = tune_rung(KILLER, space, journal, ev, options, device=device, problem=problem,
                        ref=REF)
    assert (tmp_path / "killed").exists()  # a worker was killed
    # the killed worker's configuration went back at least once; on a loaded machine the client
    # may also lose the scheduler for a moment, which cancels what was under way on the workers
    # alive and sends that back too: measured again, journaled once all the same (below)
    # the killed worker's configuration went back; on a loaded machine a live worker may also
    # be missing from the scheduler's list for a moment, and what it had under way goes back
    # too: measured again and journaled once all the same (below)
    assert ev.requeued >= 1 and any("goes back to the queue" in n for n in notes), notes
    search = _search_records(tmp_path / "j.jsonl")
    keys = [tuple(sorted(r["config"].items())) for r in search]
    assert len(keys) == len(set(keys)) == 12  # every configuration once, none lost
    assert all(r["status"] == "ok" for r in search)
    assert out.measured == 12 and out.entry is not None


def test_a_stopped_cluster_tune_resumes_its_one_journal(device, tmp_path, monkeypatch):
    """A cluster tune that stopped at its budget goes on from its journal: the second run
    measures only what the first did not, each configuration once in the one journal."""
    monkeypatch.setenv("CLGEMM_RESULTS", str(tmp_path))
    first = clgemm.tune(device, rungs=2, shapes=64, budget=2, strategy="exhaustive",
                        cluster=True, workers=2, confirm=0, verbose=False)
    second = clgemm.tune(device, rungs=2, shapes=64, budget=4, strategy="exhaustive",
                         cluster=True, workers=2, confirm=0, resume=True, verbose=False)
    assert first.journals == second.journals
    [outcome] = [o for _, o in second.outcomes]
    assert outcome.measured == 4 and outcome.measured_now == 2
    configs = [r["config"]["TS"] for r in _search_records(second.journals[0])]
    assert sorted(configs) == [4, 8, 16, 32]


def test_without_dask_the_cluster_is_refused_in_one_line(tmp_path):
    code = ("import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None; "
            "from clgemm.cli import main; sys.exit(main())")
    r = subprocess.run([sys.executable, "-c", code, "tune", "--device", "0", "--rungs", "1",
                        "--size", "64", "--budget", "1", "--cluster"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "CLGEMM_RESULTS": str(tmp_path)})
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--cluster needs Dask" in r.stderr and "clgemm[cluster]" in r.stderr
    assert "Traceback" not in r.stderr
    assert "funnel" not in r.stdout  # refused before anything is planned


@pytest.mark.parametrize("given, message", [
    ({"cluster": "  "}, "give a scheduler's address"),
    ({"cluster": 3}, "give a scheduler's address"),
    ({"workers": 2}, "sets the workers of a local cluster"),
    ({"cluster": True, "workers": 0}, "workers=0: must be positive"),
])
def test_cluster_settings_refused_by_name(device, given, message):
    with pytest.raises(UsageError, match=message):
        clgemm.tune(device, rungs=1, shapes=64, budget=1, verbose=False, **given)


@pytest.mark.parametrize("cluster", [[], ["--cluster"]], ids=["threads", "local-cluster"])
def test_every_device_tuned_at_once_each_into_its_own_database(tmp_path, cluster):
    """--device all on this machine's devices and the NumPy test backend's (registered through
    $CLGEMM_BACKENDS in every process): each device tuned into its own database, and through a
    local cluster each by the worker of its own device, which every record names."""
    unit = Path(__file__).parent / "unit"
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path), "CLGEMM_BACKENDS": "numpy_backend",
           "PYTHONPATH": os.pathsep.join([str(unit), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--device", "all", "--rungs",
                        "2", "--size", "64", "--budget", "2", "--confirm", "1", "--jobs", "0",
                        *cluster, "--json", "-"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(r.stdout)
    assert data["format"] == "clgemm-tune-all"
    assert sorted(data) == ["command", "devices", "format"]  # docs/cli.md's keys of tune-all
    devices = data["devices"]
    assert len(devices) >= 2 and "numpy-test" in {d["device"]["backend"] for d in devices}
    assert len({d["database"] for d in devices}) == len(devices)
    for d in devices:
        assert Path(d["database"]).is_file()
        [journal] = d["journals"]
        search = _search_records(Path(journal))
        assert len(search) == 2 and all(r["status"] == "ok" for r in search)
        if cluster:
            assert {r["ran_on"]["index"] for r in search} == {d["device"]["index"]}
    if cluster:
        assert "measuring on a local cluster" in r.stderr


def test_every_device_refuses_one_database_and_python_names_the_command(tmp_path):
    r = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--device", "all", "--rungs",
                        "1", "--size", "64", "--budget", "1", "--database",
                        str(tmp_path / "db.json")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "each device into its own database" in r.stderr
    with pytest.raises(UsageError, match="clgemm tune --device all"):
        clgemm.tune("all", rungs=1, shapes=64, budget=1, verbose=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_running_cluster_of_dask_worker_is_tuned_on(device, tmp_path):
    """The steps docs/tuning.md gives, on loopback: `dask scheduler`, then `dask worker ADDRESS
    --resources GPU=1` as its command line starts it (a daemon process, which the measuring
    processes must still be able to come from), then `clgemm tune --cluster ADDRESS`."""
    dask_cli = Path(sys.executable).parent / "dask"
    if not dask_cli.exists():
        pytest.skip("no dask command beside this Python")
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = {**os.environ, "CLGEMM_RESULTS": str(tmp_path), "CLGEMM_DEVICE": str(device.index)}
    procs = [subprocess.Popen([str(dask_cli), "scheduler", "--host", "127.0.0.1", "--port",
                               address.rsplit(":", 1)[1], "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    try:
        procs.append(subprocess.Popen([str(dask_cli), "worker", address, "--nthreads", "1",
                                       "--resources", "GPU=1", "--no-dashboard"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      env=env))
        r = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--device",
                            str(device.index), "--rungs", "2", "--size", "64", "--budget", "3",
                            "--confirm", "1", "--cluster", address, "--json", "-"],
                           capture_output=True, text=True, timeout=300, env=env)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    assert r.returncode == 0, r.stdout + r.stderr
    [journal] = json.loads(r.stdout)["journals"]
    search = _search_records(Path(journal))
    assert len(search) == 3 and all(r["status"] == "ok" for r in search)
    assert {r["ran_on"]["index"] for r in search} == {device.index}


def test_an_address_where_no_scheduler_answers_is_refused(device, tmp_path):
    r = subprocess.run([sys.executable, "-m", "clgemm", "tune", "--device", str(device.index),
                        "--rungs", "1", "--size", "64", "--budget", "1", "--cluster",
                        f"tcp://127.0.0.1:{_free_port()}"],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "CLGEMM_RESULTS": str(tmp_path)})
    assert r.returncode == 2 and "no scheduler answers there" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_hosts_builders_are_shared_by_its_workers(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert builders_here(None, 2) == 8  # the host's cores, halved
    assert builders_here(None, 32) == 1  # never none unless asked
    assert builders_here(6, 4) == 1 and builders_here(12, 4) == 3  # --jobs is the host's
    assert builders_here(0, 1) == 0  # --jobs 0: every worker builds only what it measures
