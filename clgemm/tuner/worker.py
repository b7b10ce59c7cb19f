"""The child processes of a tuning run: one measuring worker and the pre-building pool.

Both run in their own (spawned) processes because a kernel can hang the device thread forever or
crash the driver, and the only reliable way to get past either is to kill the process and start
another. Nothing here decides anything: the parent (`evaluate.py`) sends work, watches the
clock, and reads the answers.

The measuring worker reports which phase it is in (building, launching, host work) before each
one, so the parent can hold a launch to its own time limit rather than one limit for the whole
evaluation. On a CPU device it also stops the pre-building processes (SIGSTOP) from its first
launch of a configuration until it has finished timing it, and lets them go on afterwards
(SIGCONT). Not only would the kernel and the compilers otherwise share the cores; the opposite
happens too: on this project's 2-core VM a busy neighbouring core made a PoCL kernel *faster*
(1.15 ms against 1.55 ms alone; idle virtual CPUs are slow to wake), so results measured while
builders happened to be compiling would be ranked against results measured while they happened to
be idle. Holding them still over the whole launch sequence, gaps between launches included, gives
every configuration the conditions of a lone process, which are also the ladder's.
"""

from __future__ import annotations

import ctypes
import importlib
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any, Mapping, Sequence

from clgemm.backends import list_devices, open_backend
from clgemm.backends.base import Backend
from clgemm.core.problem import Problem
from clgemm.core.errors import BuildError
from clgemm.measure.rung_runner import Workspace, measured_macros, run_rung
from clgemm.rungs import Rung, get_rung

#: the exit status of a child that found itself calling clgemm.tune() while it started: the
#: parent reads it as "the script calls tune() without a main guard" (see `starting_child`)
SCRIPT_RERUN_EXIT = 3


def starting_child() -> bool:
    """Whether this process is a child that multiprocessing is still starting. A spawned child
    runs the parent's main script again (as `__mp_main__`) before it gets its task, so a
    script that calls clgemm.tune() outside `if __name__ == "__main__":` calls it once more in
    every measuring process; the flag is the one multiprocessing itself checks to refuse a
    child starting children of its own."""
    return bool(getattr(mp.current_process(), "_inheriting", False))


def script_rerun_message() -> str:
    """What the parent says when a child ended with SCRIPT_RERUN_EXIT, naming the script."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    where = f"the script {script}" if script else "the calling script"
    return (f"clgemm.tune() is called at the top level of {where}: the measuring processes it "
            f"starts run that script again (multiprocessing's spawn start method), so each "
            f"of them called tune() too; put the call under 'if __name__ == \"__main__\":' "
            f"(docs/python.md shows how)")


def resolve_rung(ref: int | str) -> Rung:
    """The rung a reference names; a "module:attribute" reference lets a child process find a
    rung that is not in the registry (a test's fake rung), which cannot be pickled."""
    if isinstance(ref, int) or str(ref).isdigit():
        return get_rung(int(ref))
    module, _, attr = str(ref).partition(":")
    return getattr(importlib.import_module(module), attr)


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a parent killed with -9 cannot
    clean up). Best effort: elsewhere the children notice the closed pipe and exit."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def ignore_ctrl_c() -> None:
    """Leave Ctrl-C to the parent, which stops the run, keeps the journal whole and ends the
    children. `evaluate` starts the children with SIGINT blocked, which covers their start;
    here it is ignored for good, which covers Python; but the OpenCL compiler (LLVM, inside
    PoCL) installs a SIGINT handler of its own while it compiles, and a Ctrl-C then breaks
    the build with a stray "1 error generated." on the terminal. Leaving the terminal's process group keeps Ctrl-C from reaching the child at
    all; the parent ends it (and `die_with_parent` covers a parent that is killed)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.setpgid(0, 0)
    except OSError:  # not permitted here (a session leader, say): ignoring SIGINT must do
        pass


def _open_device(index: int, key: str):
    devices = list_devices()
    if not 0 <= index < len(devices) or devices[index].key != key:
        raise RuntimeError(f"device {index} is not {key} in this process")
    return devices[index]


def parent_pid(pid: int) -> int | None:
    """The parent of process `pid` as Linux's /proc says it; None where it cannot say (the
    process is gone, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _siblings(pids: Sequence[int]) -> list[int]:
    """Only the pids that are still our parent's children: a builder that died may have had its
    pid reused by a process we must not stop."""
    return [pid for pid in pids if parent_pid(pid) == os.getppid()]


class ReportingBackend(Backend):
    """The real backend, plus a phase message before each build and launch, and the
    builders held still from the first launch until `let_go`."""

    def __init__(self, inner: Backend, conn: Connection, quiet: Sequence[int] = ()):
        self.inner = inner
        self.name = inner.name
        self.device = inner.device
        self.conn = conn
        self.quiet = list(quiet)
        self.held = False

    def hold(self) -> None:
        if not self.held:
            for pid in self.quiet:
                _signal(pid, signal.SIGSTOP)
            self.held = True

    def let_go(self) -> None:
        if self.held:
            for pid in self.quiet:
                _signal(pid, signal.SIGCONT)
            self.held = False

    def _phase(self, phase: str) -> None:
        self.conn.send(("phase", phase))

    def header(self) -> str:
        return self.inner.header()

    def build(self, source: str, defines: Mapping[str, int], kernel: str) -> Any:
        self._phase("build")
        try:
            return self.inner.build(source, defines, kernel)
        finally:
            self._phase("host")

    def to_device(self, host):
        return self.inner.to_device(host)

    def alloc(self, count: int):
        return self.inner.alloc(count)

    def fill(self, buf, value: float, count: int) -> None:
        self.inner.fill(buf, value, count)

    def to_host(self, buf, count: int):
        return self.inner.to_host(buf, count)

    def launch(self, kernel, global_size, local_size, args) -> float:
        self._phase("launch")
        self.hold()
        try:
            return self.inner.launch(kernel, global_size, local_size, args)
        finally:
            self._phase("host")

    def release(self) -> None:
        self.inner.release()


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def measure_main(conn: Connection, device_index: int, device_key: str, size: Sequence[int],
                 seed: int) -> None:
    """Measuring worker: ("run", rung_ref, params, repeats, warmup, quiet_pids) in, phase
    messages and one ("result", dict) out per task; ("problem", size) makes the workspace of
    another problem and answers ("ready", pid) as the start does; ("stop",) or a closed pipe
    ends it."""
    ignore_ctrl_c()
    die_with_parent()
    try:
        device = _open_device(device_index, device_key)
        backend = open_backend(device)
        ws = _workspace(backend, size, seed)
        conn.send(("ready", os.getpid()))
    except Exception as exc:
        conn.send(("fatal", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] == "problem":
            del ws  # the last problem's buffers go before the next one's are made
            try:
                ws = _workspace(backend, msg[1], seed)
                conn.send(("ready", os.getpid()))
            except Exception as exc:
                conn.send(("fatal", f"{type(exc).__name__}: {exc}"))
                return
            continue
        if msg[0] != "run":
            return
        _, ref, params, repeats, warmup, quiet = msg
        t0 = time.perf_counter()
        proxy = ReportingBackend(backend, conn, _siblings(quiet))
        try:
            rung = resolve_rung(ref)
            res = run_rung(proxy, ws, rung, params, repeats=repeats, warmup=warmup).to_json()
        except Exception as exc:  # the driver's own exceptions, a bad fake rung, ...
            res = {"status": "failed", "message": f"{type(exc).__name__}: {exc}",
                   "detail": traceback.format_exc(limit=3)}
        finally:
            proxy.let_go()
        res["eval_s"] = time.perf_counter() - t0
        try:
            conn.send(("result", res))
        except (EOFError, OSError, BrokenPipeError):
            return


def _workspace(backend: Backend, size: Sequence[int], seed: int) -> Workspace:
    """A problem's inputs on the device and its float64 reference, computed now rather than
    inside the first kernel's time limit."""
    ws = Workspace(backend, Problem(*size), seed=seed)
    ws.ref
    return ws


def warm_problem(rung: Rung, params: Mapping[str, int]) -> Problem:
    """The smallest problem the configuration can do: one work-group, one step of k. Building
    and launching it compiles everything the real launch will need (PoCL generates the
    work-group function per local size at first launch, and caches it) at almost no cost."""
    tm, tn = rung.output_tile(params)
    m, n, k = rung.size_multiples(params)
    return Problem(max(tm, m, 1), max(tn, n, 1), max(rung.k_step(params), k, 1))


def build_main(conn: Connection, device_index: int, device_key: str) -> None:
    """Pre-builder: ("warm", tag, rung_ref, params, measured problem) in, phase messages and
    ("done", tag, status, seconds) out; phases let the parent stop a pre-build whose launch runs
    away."""
    ignore_ctrl_c()
    die_with_parent()
    try:
        device = _open_device(device_index, device_key)
        backend = ReportingBackend(open_backend(device), conn)
        conn.send(("ready", os.getpid()))
    except Exception as exc:
        conn.send(("fatal", f"{type(exc).__name__}: {exc}"))
        return
    spaces: dict[Problem, Workspace] = {}
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] != "warm":
            return
        _, tag, ref, params, measured = msg
        t0 = time.perf_counter()
        try:
            status = _prebuild(backend, spaces, resolve_rung(ref), params, measured)
        except Exception as exc:
            status = f"failed: {type(exc).__name__}: {exc}"
        try:
            conn.send(("done", tag, status, time.perf_counter() - t0))
        except (EOFError, OSError, BrokenPipeError):
            return


def _prebuild(backend: Backend, spaces: dict[Problem, Workspace], rung: Rung,
              params: Mapping[str, int], measured: Problem) -> str:
    """Build what measuring the configuration on `measured` will launch: the warm-up problem's
    run where that builds the same kernel, else the measured variant alone (K split into
    slices, B read as it lies, a stack), which the warm-up would not have built."""
    problem = warm_problem(rung, params)
    macros = measured_macros(backend.device, rung, params, measured)
    if macros != measured_macros(backend.device, rung, params, problem):
        try:
            backend.program(rung.file, macros, rung.kernel)
        except BuildError:
            return "build-failed"
        return "ok"
    if problem not in spaces:
        if len(spaces) > 16:
            spaces.clear()
        spaces[problem] = Workspace(backend, problem, seed=1)
    return run_rung(backend, spaces[problem], rung, params, repeats=1, warmup=0).status
